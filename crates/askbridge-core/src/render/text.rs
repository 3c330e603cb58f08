//! The numbered plain-text prompt and the status line shown when
//! an ask ends, plus the line formatting the other views share.
//!
//! Options are numbered `1.` `2.` (or lettered `A.` `B.`), questions are
//! labelled `Q1` `Q2`, so question and option numbers never collide. Every
//! fixed phrase comes from [`super::locale`]; the output depends on nothing
//! but the ask and the locale.

use crate::lifecycle::{Clarify, Rejection, State};
use crate::model::{
    Ask, ChannelKind, Choice, Place, Question, QuestionKind, Responder, Target, Timestamp,
    has_recommended_marker, strip_recommended_marker,
};
use crate::outcome::{Outcome, Reason, Status};

use super::locale::{Locale, Strings, fill};
use super::split::{Unit, cut};

/// The marker shown after a recommended option's label.
pub(super) const RECOMMENDED_MARK: &str = "⭐";

/// Longest default or placeholder shown in a hint.
const MAX_HINT_VALUE_CHARS: usize = 60;
/// Longest answer summary in a status line.
const MAX_SUMMARY_CHARS: usize = 160;
/// Longest name in a status line.
const MAX_NAME_CHARS: usize = 48;
/// Room a status line (plus the blank line before it) may need; views keep
/// this much of a message free so the final edit always fits.
pub(super) const STATUS_RESERVE: usize = 256;

/// How an ask ended, for its status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndState<'a> {
    /// Answered; `summary` is the short answer ("Staging"), `by` the name
    /// of who answered, when known.
    Answered {
        /// Short answer text, one line.
        summary: &'a str,
        /// Display name of who answered.
        by: Option<&'a str>,
        /// Where it was answered, when that is another of the ask's
        /// places than the one this line is shown in ("Slack").
        elsewhere: Option<&'a str>,
    },
    /// Answered in the agent host's own dialog (the terminal, the editor).
    AnsweredInHost {
        /// Short answer text, one line.
        summary: &'a str,
    },
    /// Answered here after the agent's host had decided in its own
    /// dialog: the answer came too late.
    AnsweredInHostFirst {
        /// Short text of the late answer, one line.
        summary: &'a str,
        /// Display name of who gave it.
        by: Option<&'a str>,
    },
    /// The person skipped the ask.
    Skipped,
    /// Nobody answered in time.
    Expired,
    /// The agent cancelled the ask.
    Cancelled,
    /// The ask could not be delivered.
    DeliveryFailed,
}

/// The one line added to the question message when the ask ends:
/// `✅ Staging — answered by Alice`, `⏭ Skipped`, `⌛ Expired`,
/// `✖ Cancelled`, `⚠ Not delivered`. The summary and name are put on one
/// line and cut, so the line stays under 256 characters.
pub fn status_line(end: &EndState<'_>, locale: Locale) -> String {
    let s = locale.strings();
    match end {
        EndState::Answered {
            summary,
            by,
            elsewhere,
        } => {
            let summary = cut(&one_line(summary), MAX_SUMMARY_CHARS, Unit::Utf16);
            let by = by
                .map(|name| cut(&one_line(name), MAX_NAME_CHARS, Unit::Utf16))
                .filter(|name| !name.is_empty());
            if let Some(place) = elsewhere {
                let suffix = match &by {
                    Some(name) => fill(s.answered_by_in, &[("name", name), ("place", place)]),
                    None => fill(s.answered_in, &[("place", place)]),
                };
                let summary = if summary.is_empty() {
                    s.answered
                } else {
                    &summary
                };
                return format!("✅ {summary} — {suffix}");
            }
            match (summary.is_empty(), by) {
                (false, Some(name)) => {
                    format!("✅ {summary} — {}", fill(s.answered_by, &[("name", &name)]))
                }
                (false, None) => format!("✅ {summary}"),
                (true, Some(name)) => {
                    format!("✅ {}", fill(s.answered_by_alone, &[("name", &name)]))
                }
                (true, None) => format!("✅ {}", s.answered),
            }
        }
        EndState::AnsweredInHost { summary } => {
            let summary = cut(&one_line(summary), MAX_SUMMARY_CHARS, Unit::Utf16);
            if summary.is_empty() {
                format!("✅ {}", s.answered_in_host_alone)
            } else {
                format!("✅ {summary} — {}", s.answered_in_host)
            }
        }
        EndState::AnsweredInHostFirst { summary, by } => {
            let answer = cut(&one_line(summary), MAX_SUMMARY_CHARS, Unit::Utf16);
            let answer = if answer.is_empty() {
                s.answered
            } else {
                &answer
            };
            let line = match by
                .map(|name| cut(&one_line(name), MAX_NAME_CHARS, Unit::Utf16))
                .filter(|name| !name.is_empty())
            {
                Some(name) => fill(
                    s.answered_in_host_first,
                    &[("answer", answer), ("name", &name)],
                ),
                None => fill(s.answered_in_host_first_alone, &[("answer", answer)]),
            };
            format!("⚠ {line}")
        }
        EndState::Skipped => format!("⏭ {}", s.skipped),
        EndState::Expired => format!("⌛ {}", s.expired),
        EndState::Cancelled => format!("✖ {}", s.cancelled),
        EndState::DeliveryFailed => format!("⚠ {}", s.delivery_failed),
    }
}

/// The status line of an ended ask, from its outcome: what was answered
/// (labels without the "(Recommended)" marker, own words, yes / no in the
/// locale; questions separated by ` · `) and by whom, or why it ended.
pub fn closing_line(outcome: &Outcome, locale: Locale) -> String {
    closing_line_at(outcome, None, locale)
}

/// What a message shows once its ask ended: what it showed (trimmed, cut
/// to `max_shown_chars`), a blank line and the status line; either alone
/// when the other is blank. The status line is never cut.
pub fn closed_text(shown: &str, status: &str, max_shown_chars: usize) -> String {
    let status = status.trim();
    let shown = super::cut(shown.trim_end(), max_shown_chars, Unit::Utf16);
    match (shown.trim().is_empty(), status.is_empty()) {
        (true, _) => status.to_owned(),
        (false, true) => shown,
        (false, false) => format!("{shown}\n\n{status}"),
    }
}

/// [`closing_line_at`] for an ask in `state`: one the person answered in
/// the agent host's own prompt (a hook saw the host go on without it)
/// says so; one answered here after the host had decided
/// ([`State::Overtaken`]) says that too, and what came too late, from
/// `outcome`: for such an ask, the outcome its late answer made
/// ([`crate::lifecycle::AskLifecycle::late_outcome`]).
pub fn ended_line(
    state: &State,
    outcome: &Outcome,
    here: Option<&Place>,
    locale: Locale,
) -> String {
    match state {
        State::Cancelled { in_host: true, .. } => {
            status_line(&EndState::AnsweredInHost { summary: "" }, locale)
        }
        State::Overtaken { by, .. } => status_line(
            &EndState::AnsweredInHostFirst {
                summary: &answer_summary(outcome, locale),
                by: Some(display_name(by)),
            },
            locale,
        ),
        _ => closing_line_at(outcome, here, locale),
    }
}

/// [`closing_line`] for the message in one of the ask's places (`here`):
/// an answer given in another place says where (`— answered by Alice in
/// Slack`).
pub fn closing_line_at(outcome: &Outcome, here: Option<&Place>, locale: Locale) -> String {
    let end = match (outcome.status, outcome.reason) {
        (Status::Answered, _) => None,
        (Status::NoAnswer, Some(Reason::Skipped)) => Some(EndState::Skipped),
        (Status::NoAnswer, Some(Reason::Cancelled)) => Some(EndState::Cancelled),
        (Status::NoAnswer, Some(Reason::DeliveryFailed)) => Some(EndState::DeliveryFailed),
        (Status::NoAnswer, Some(Reason::Timeout) | None) => Some(EndState::Expired),
    };
    if let Some(end) = end {
        return status_line(&end, locale);
    }
    let summary = answer_summary(outcome, locale);
    if outcome
        .answered_by
        .as_ref()
        .is_some_and(|who| who.channel == ChannelKind::Host)
    {
        return status_line(&EndState::AnsweredInHost { summary: &summary }, locale);
    }
    let by = outcome.answered_by.as_ref().map(display_name);
    let elsewhere = outcome
        .answered_by
        .as_ref()
        .and_then(|who| who.place.as_ref())
        .filter(|place| here.is_some_and(|here| here != *place))
        .map(|place| place_name(place, locale));
    status_line(
        &EndState::Answered {
            summary: &summary,
            by,
            elsewhere,
        },
        locale,
    )
}

/// Who answered, as people see them: their name, else their id.
fn display_name(who: &Responder) -> &str {
    who.name
        .as_deref()
        .filter(|name| !name.trim().is_empty())
        .unwrap_or(&who.user_id)
}

/// What was answered, one line: labels without the "(Recommended)"
/// marker, own words, yes / no in the locale; questions separated by
/// ` · `.
fn answer_summary(outcome: &Outcome, locale: Locale) -> String {
    let s = locale.strings();
    outcome
        .details
        .iter()
        .filter(|detail| !detail.skipped)
        .map(|detail| {
            let mut parts: Vec<String> = detail
                .selected
                .iter()
                .map(|label| match label.as_str() {
                    "yes" if detail.values == ["yes"] => s.yes.to_owned(),
                    "no" if detail.values == ["no"] => s.no.to_owned(),
                    _ => strip_recommended_marker(label).to_owned(),
                })
                .collect();
            if detail.selected.is_empty() && detail.other.is_none() {
                parts.extend(detail.values.iter().cloned());
            }
            parts.extend(detail.other.iter().cloned());
            parts.join(s.list_sep)
        })
        .filter(|part| !part.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" · ")
}

/// A reminder of an ask nobody has answered, at `now`: `⏰ Still waiting
/// for your answer — expires in 5 min`.
pub fn reminder_text(deadline: Timestamp, now: Timestamp, locale: Locale) -> String {
    let s = locale.strings();
    let minutes = deadline.0.saturating_sub(now.0) / 60_000;
    let expires = if minutes < 2 {
        s.page_expires_soon.to_owned()
    } else if minutes < 60 {
        fill(s.page_expires_min, &[("m", &minutes.to_string())])
    } else {
        fill(
            s.page_expires_h_min,
            &[
                ("h", &(minutes / 60).to_string()),
                ("m", &(minutes % 60).to_string()),
            ],
        )
    };
    format!("⏰ {} — {expires}", s.still_waiting)
}

/// The line above an ask passed on to a place of its escalation:
/// `↪ Passed on from Telegram after 10 min without an answer`.
pub fn passed_on_line(from: &Place, after_seconds: u32, locale: Locale) -> String {
    let s = locale.strings();
    let after = if after_seconds < 60 {
        fill(s.duration_s, &[("s", &after_seconds.to_string())])
    } else {
        fill(s.duration_min, &[("m", &(after_seconds / 60).to_string())])
    };
    format!(
        "↪ {}",
        fill(
            s.passed_on,
            &[("place", place_name(from, locale)), ("after", &after)]
        )
    )
}

/// A place as a person calls it: the platform's name, or the web page.
pub fn place_name(place: &Place, locale: Locale) -> &'static str {
    match place.channel() {
        ChannelKind::Telegram => "Telegram",
        ChannelKind::Discord => "Discord",
        ChannelKind::Slack => "Slack",
        ChannelKind::Feishu => "Feishu",
        ChannelKind::Matrix => "Matrix",
        ChannelKind::Teams => "Teams",
        ChannelKind::Email => "email",
        ChannelKind::Web | ChannelKind::Host => locale.strings().web_page,
    }
}

/// The questions still open after a partial reply, asked again: a short
/// intro, then only those questions, numbered as in the full prompt (so
/// `Q2: 1` still means the second question), and the footer for what is
/// left. Indices that are not questions are ignored.
pub fn reask_prompt(ask: &Ask, open: &[usize], locale: Locale) -> String {
    let s = locale.strings();
    let several = ask.questions.len() != 1;
    let mut rest = ask.clone();
    rest.questions = open
        .iter()
        .filter_map(|&index| ask.questions.get(index).cloned())
        .collect();
    let mut out = format!("{}\n\n", s.still_open);
    for &index in open {
        let Some(question) = ask.questions.get(index) else {
            continue;
        };
        let hints = prompt_hints(question, s, several);
        out.push_str(&question_line(
            question,
            several.then_some(index + 1),
            &hints,
            s,
        ));
        out.push('\n');
        if question.kind.has_options() {
            for (option, choice) in question.options.iter().enumerate() {
                out.push_str(&option_line(question, option, choice));
                out.push('\n');
            }
        }
    }
    out.push('\n');
    out.push_str(footer(&rest, s));
    out.push_str(s.sentence_sep);
    out.push_str(s.reply_skip);
    out
}

/// Asks about the items of a list reply that named no option
/// ([`crate::resolve::OptionMatcher::unknown_items`]): `I didn't understand
/// "deploy" for “Checks” — reply with option numbers or names, or write your
/// own answer.` The question is named as in [`clarify_prompt`] (`Q2 …` when
/// the ask has several); lettered questions ask for letters. Empty when
/// there are no items or no such question.
pub fn unknown_items_prompt(
    ask: &Ask,
    question: usize,
    items: &[String],
    locale: Locale,
) -> String {
    let s = locale.strings();
    let Some(asked) = ask.questions.get(question) else {
        return String::new();
    };
    let items: Vec<String> = items
        .iter()
        .map(|item| cut(&one_line(item), MAX_HINT_VALUE_CHARS, Unit::Utf16))
        .filter(|item| !item.is_empty())
        .map(|item| fill(s.unknown_item, &[("item", &item)]))
        .collect();
    if items.is_empty() {
        return String::new();
    }
    let template = if asked.letters {
        s.unknown_items_letters
    } else {
        s.unknown_items
    };
    let name = question_name(ask, question, asked);
    fill(
        template,
        &[("items", &items.join(s.list_sep)), ("q", name.trim())],
    )
}

/// A question as a follow-up names it: its header (else its text), cut,
/// after `Q2` when the ask has several questions.
fn question_name(ask: &Ask, index: usize, question: &Question) -> String {
    let name = [one_line(&question.header), one_line(&question.text)]
        .into_iter()
        .find(|name| !name.is_empty())
        .unwrap_or_default();
    match ask.questions.len() != 1 {
        true => format!(
            "Q{} {}",
            index + 1,
            cut(&name, MAX_HINT_VALUE_CHARS, Unit::Utf16)
        ),
        false => cut(&name, MAX_HINT_VALUE_CHARS, Unit::Utf16),
    }
}

/// Asks which option an ambiguous reply meant: one line per question,
/// naming the candidates with the numbers (or letters) they have in the
/// prompt, so typing one resolves it.
pub fn clarify_prompt(ask: &Ask, clarify: &[Clarify], locale: Locale) -> String {
    let s = locale.strings();
    clarify
        .iter()
        .filter_map(|c| {
            let question = ask.questions.get(c.question)?;
            let options = c
                .options
                .iter()
                .zip(&c.candidates)
                .map(|(&index, label)| match question.kind {
                    QuestionKind::Confirm => label.clone(),
                    _ => format!(
                        "{}. {}",
                        option_marker(question, index),
                        one_line(strip_recommended_marker(label))
                    ),
                })
                .collect::<Vec<_>>()
                .join(" / ");
            let name = question_name(ask, c.question, question);
            Some(fill(
                s.clarify,
                &[("q", name.trim()), ("options", &options)],
            ))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a person is told when their press, reply or form is refused: it
/// is not theirs (naming who it is for, when the ask names a `@username`:
/// `for_user`), the ask has ended (answered, expired, cancelled), or what
/// was wrong with it.
pub fn refusal(rejection: &Rejection, for_user: Option<&str>, locale: Locale) -> String {
    let s = locale.strings();
    match rejection {
        Rejection::NotForYou => match for_user {
            Some(user) if user.starts_with('@') => fill(s.not_for_you_named, &[("name", user)]),
            _ => s.not_for_you.to_owned(),
        },
        Rejection::AlreadyEnded(State::TimedOut) => s.already_expired.to_owned(),
        Rejection::AlreadyEnded(State::Cancelled { .. }) => s.already_cancelled.to_owned(),
        Rejection::AlreadyEnded(_) => s.already_answered.to_owned(),
        Rejection::Invalid(invalid) => invalid.to_string(),
    }
}

/// The answer to `/askbridge` ([`crate::inbound::is_where_command`]):
/// the exact target strings for asking `user` at `place` — for them alone
/// or, in a shared conversation, for anyone there.
pub fn where_answer(place: &Place, user: &str, locale: Locale) -> String {
    let s = locale.strings();
    let anyone = Target {
        place: place.clone(),
        user: None,
    };
    if place.is_direct() {
        return fill(s.where_direct, &[("mine", &anyone.to_string())]);
    }
    let mine = Target {
        user: Some(user.to_owned()),
        ..anyone.clone()
    };
    fill(
        s.where_here,
        &[("mine", &mine.to_string()), ("anyone", &anyone.to_string())],
    )
}

/// Told when a reply matched no open question of a multi-question ask.
pub fn not_understood(ask: &Ask, locale: Locale) -> String {
    let s = locale.strings();
    fill(s.not_understood, &[("eg", &keyed_example(ask, s))])
}

/// The numbered plain-text prompt for a whole ask.
///
/// One question: the title (if any) on its own line, the question as
/// `Header — text`, its options, then a footer. Several questions: an intro
/// line (`Title — N questions. Answer each on its own line, like "Q1: 2".`),
/// each question as `Q1 Header — text`, then a footer. Hints after a
/// question say what else to know: optional, choose any, yes / no, write
/// your answer (with the placeholder as an example), the default.
pub fn text_prompt(ask: &Ask, locale: Locale) -> String {
    let s = locale.strings();
    let several = ask.questions.len() != 1;
    let mut out = String::new();
    let title = ask.title.as_deref().map(one_line).filter(|t| !t.is_empty());

    if several {
        let count = ask.questions.len().to_string();
        let example = keyed_example(ask, s);
        let intro = fill(s.intro_multi, &[("n", &count), ("eg", &example)]);
        if let Some(title) = &title {
            out.push_str(title);
            out.push_str(" — ");
        }
        out.push_str(&intro);
        out.push_str("\n\n");
    } else if let Some(title) = &title {
        out.push_str(title);
        out.push_str("\n\n");
    }

    for (index, question) in ask.questions.iter().enumerate() {
        let number = several.then_some(index + 1);
        let hints = prompt_hints(question, s, several);
        out.push_str(&question_line(question, number, &hints, s));
        out.push('\n');
        if question.kind.has_options() {
            for (option, choice) in question.options.iter().enumerate() {
                out.push_str(&option_line(question, option, choice));
                out.push('\n');
            }
        }
    }
    if !ask.questions.is_empty() {
        out.push('\n');
    }
    out.push_str(footer(ask, s));
    out.push_str(s.sentence_sep);
    out.push_str(s.reply_skip);
    out
}

/// The keyed example of the intro, for the first question: `Q1: 2` for a
/// choice question (`Q1: B` when lettered), `Q1: yes` for a confirm
/// question, `Q1: your answer` for a text question.
fn keyed_example(ask: &Ask, s: &Strings) -> String {
    let answer = match ask.questions.first() {
        Some(q) if q.kind.has_options() && !q.options.is_empty() => {
            option_marker(q, q.options.len().min(2) - 1)
        }
        Some(q) if q.kind == QuestionKind::Confirm => s.yes_word.to_owned(),
        _ => s.eg_text_answer.to_owned(),
    };
    format!("Q1: {answer}")
}

/// The footer sentence before "Reply "skip" to skip.".
fn footer(ask: &Ask, s: &'static Strings) -> &'static str {
    let choices: Vec<&Question> = ask
        .questions
        .iter()
        .filter(|q| q.kind.has_options() && !q.options.is_empty())
        .collect();
    let letters = !choices.is_empty() && choices.iter().all(|q| q.letters);
    match ask.questions.as_slice() {
        [only] => match only.kind {
            QuestionKind::Single if only.letters => s.reply_letter,
            QuestionKind::Single => s.reply_number,
            QuestionKind::Multi if only.letters => s.reply_letters,
            QuestionKind::Multi => s.reply_numbers,
            QuestionKind::Confirm => s.reply_confirm,
            QuestionKind::Text | QuestionKind::Textarea => s.reply_text,
        },
        _ if choices.is_empty() => s.reply_answers,
        _ if letters => s.reply_letters,
        _ => s.reply_numbers,
    }
}

/// Hints of a question in the text prompt: optional, what to type, default.
fn prompt_hints(question: &Question, s: &Strings, several: bool) -> Vec<String> {
    let mut hints = Vec::new();
    if !question.required {
        hints.push(s.hint_optional.to_owned());
    }
    let placeholder = question
        .placeholder
        .as_deref()
        .map(clean_placeholder)
        .filter(|p| !p.is_empty());
    match question.kind {
        QuestionKind::Single => {}
        QuestionKind::Multi => {
            let count = question.options.len();
            let picks: &[usize] = match count {
                0 | 1 => &[0],
                2 => &[0, 1],
                _ => &[0, 2],
            };
            let example = picks
                .iter()
                .map(|&i| option_marker(question, i))
                .collect::<Vec<_>>()
                .join(", ");
            hints.push(fill(s.hint_multi, &[("eg", &example)]));
        }
        QuestionKind::Confirm => hints.push(s.hint_confirm.to_owned()),
        QuestionKind::Textarea if !several => {
            hints.push(s.hint_textarea.to_owned());
            if let Some(p) = &placeholder {
                hints.push(fill(s.hint_eg, &[("eg", p)]));
            }
        }
        QuestionKind::Text | QuestionKind::Textarea => match &placeholder {
            Some(p) => hints.push(fill(s.hint_text_eg, &[("eg", p)])),
            None => hints.push(s.hint_text.to_owned()),
        },
    }
    hints.extend(default_hint(question, s));
    hints
}

/// Hints of a question drawn with controls (buttons, steps): only what the
/// controls cannot say — optional, and the default.
pub(super) fn control_hints(question: &Question, s: &Strings) -> Vec<String> {
    let mut hints = Vec::new();
    if !question.required {
        hints.push(s.hint_optional.to_owned());
    }
    hints.extend(default_hint(question, s));
    hints
}

/// `default: …` for a question with a default, shown as the person sees
/// the answer: option display labels, yes / no in the locale, or the text.
fn default_hint(question: &Question, s: &Strings) -> Option<String> {
    let values = question.default.as_ref()?;
    let shown: Vec<String> = values
        .iter()
        .map(|value| value.trim())
        .filter(|value| !value.is_empty())
        .map(|value| match question.kind {
            QuestionKind::Confirm => match value.to_lowercase().as_str() {
                "yes" | "y" | "true" => s.yes_word.to_owned(),
                "no" | "n" | "false" => s.no_word.to_owned(),
                _ => cut(&one_line(value), MAX_HINT_VALUE_CHARS, Unit::Utf16),
            },
            QuestionKind::Single | QuestionKind::Multi => {
                let bare = strip_recommended_marker(value);
                question
                    .options
                    .iter()
                    .find(|choice| {
                        choice.label.trim().eq_ignore_ascii_case(value)
                            || choice.display_label().eq_ignore_ascii_case(bare)
                    })
                    .map_or_else(|| one_line(bare), |choice| one_line(choice.display_label()))
            }
            QuestionKind::Text | QuestionKind::Textarea => {
                cut(&one_line(value), MAX_HINT_VALUE_CHARS, Unit::Utf16)
            }
        })
        .collect();
    if shown.is_empty() {
        return None;
    }
    Some(fill(s.hint_default, &[("d", &shown.join(s.list_sep))]))
}

/// A placeholder as an example: one line, without a leading "e.g.", cut.
fn clean_placeholder(placeholder: &str) -> String {
    let line = one_line(placeholder);
    let mut rest = line.as_str();
    for prefix in [
        "e.g.",
        "e.g",
        "eg.",
        "eg:",
        "例如：",
        "例如:",
        "例如",
        "如：",
        "เช่น",
    ] {
        if rest.len() >= prefix.len()
            && rest.is_char_boundary(prefix.len())
            && rest[..prefix.len()].eq_ignore_ascii_case(prefix)
        {
            rest = rest[prefix.len()..].trim_start_matches([' ', ',', ':', '：', '，']);
            break;
        }
    }
    cut(rest, MAX_HINT_VALUE_CHARS, Unit::Utf16)
}

/// `Q1 Header — text (hints)`, or `Header — text (hints)` without a number.
pub(super) fn question_line(
    question: &Question,
    number: Option<usize>,
    hints: &[String],
    s: &Strings,
) -> String {
    let mut head = number.map(|n| format!("Q{n}")).unwrap_or_default();
    let header = one_line(&question.header);
    let text = question
        .text
        .trim()
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n");
    if !header.is_empty() && !repeats(&header, &text) {
        if !head.is_empty() {
            head.push(' ');
        }
        head.push_str(&header);
    }
    let mut line = match (head.is_empty(), text.is_empty()) {
        (_, true) => head,
        (true, false) => text,
        (false, false) => format!("{head} — {text}"),
    };
    if !hints.is_empty() {
        line.push_str(if line.is_empty() {
            s.hint_open.trim_start()
        } else {
            s.hint_open
        });
        line.push_str(&hints.join(s.hint_sep));
        line.push_str(s.hint_close);
    }
    line
}

/// Whether a header says nothing the question text does not: the same
/// words, give or take the closing punctuation ("Ship it" for "Ship it?").
fn repeats(header: &str, text: &str) -> bool {
    let bare = |s: &str| {
        s.trim()
            .trim_end_matches(['?', '？', '.', '。', '!', '！', ':', '：'])
            .trim_end()
            .to_lowercase()
    };
    bare(header) == bare(text)
}

/// `  1. Label ⭐ — description` (or `  A. …` for lettered questions).
pub(super) fn option_line(question: &Question, index: usize, choice: &Choice) -> String {
    let mut line = format!(
        "  {}. {}",
        option_marker(question, index),
        option_label(choice)
    );
    line.truncate(line.trim_end().len());
    if let Some(description) = choice.description.as_deref().map(one_line)
        && !description.is_empty()
    {
        line.push_str(" — ");
        line.push_str(&description);
    }
    line
}

/// An option's display label with one recommended marker, on one line.
pub(super) fn option_label(choice: &Choice) -> String {
    let mut label = one_line(choice.display_label());
    if is_recommended(choice) {
        label.push(' ');
        label.push_str(RECOMMENDED_MARK);
    }
    label
}

/// An option's label on a button, at most `max` long, with an optional
/// toggle `prefix` (☐/☑): the display label (or the option's number or
/// letter when it is blank, since platforms refuse blank buttons), cut with
/// "…" if needed, and the recommended marker kept after the cut. The flag
/// says whether the label was cut.
pub(super) fn button_label(
    question: &Question,
    index: usize,
    choice: &Choice,
    prefix: Option<&str>,
    max: usize,
) -> (String, bool) {
    let mut core = one_line(choice.display_label());
    if core.is_empty() {
        core = option_marker(question, index);
    }
    let head = prefix.map(|p| format!("{p} ")).unwrap_or_default();
    let tail = if is_recommended(choice) {
        format!(" {RECOMMENDED_MARK}")
    } else {
        String::new()
    };
    let room = max.saturating_sub(Unit::Utf16.len(&head) + Unit::Utf16.len(&tail));
    let was_cut = Unit::Utf16.len(&core) > room;
    if was_cut {
        core = cut(&core, room, Unit::Utf16);
    }
    (
        cut(&format!("{head}{core}{tail}"), max, Unit::Utf16),
        was_cut,
    )
}

/// Whether an option is recommended (flag or "(Recommended)" suffix).
pub(super) fn is_recommended(choice: &Choice) -> bool {
    choice.recommended || has_recommended_marker(&choice.label)
}

/// `1`, `2`, … or `A`, `B`, … for lettered questions (numbers past `Z`).
fn option_marker(question: &Question, index: usize) -> String {
    match u8::try_from(index) {
        Ok(offset) if question.letters && offset < 26 => char::from(b'A' + offset).to_string(),
        _ => (index + 1).to_string(),
    }
}

/// Collapses every run of whitespace (newlines included) to one space.
pub(super) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

//! The platform-neutral view: what to draw, decided once for every channel.
//!
//! Adapters destructure [`View`] exhaustively and only draw it: text parts
//! in order, buttons in the given rows on the last part, each button's
//! `key` as its callback payload.

use crate::model::{Ask, Question, QuestionKind};

use super::callback::{OptionRef, callback_key};
use super::decide::{Capabilities, Mode, Shape, decide, has_pass, layout};
use super::locale::{Locale, Strings};
use super::split::{Unit, cut, split_message};
use super::text::{
    STATUS_RESERVE, button_label, control_hints, is_recommended, one_line, option_line,
    question_line, text_prompt,
};

/// Unchecked toggle.
const UNCHECKED: &str = "☐";
/// Checked toggle.
const CHECKED: &str = "☑";
/// Shown when a message would otherwise be empty (platforms refuse those).
pub const EMPTY_TEXT: &str = "❓";
/// Longest text-input placeholder (Telegram's `input_field_placeholder`).
const MAX_PLACEHOLDER_CHARS: usize = 64;
/// Longest text-input label (Discord's modal title and field label).
const MAX_INPUT_LABEL_CHARS: usize = 45;

/// How an ask is drawn on one channel; the variant is [`decide`]'s mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View {
    /// One question with native buttons.
    Buttons(ButtonsView),
    /// The numbered plain-text prompt.
    Text(TextView),
    /// One step per question, the message edited in place between steps.
    Rich(RichView),
}

impl View {
    /// The view with a line put above its text (the first message, or
    /// every rich step): why it is shown here, such as
    /// [`passed_on_line`](super::passed_on_line).
    #[must_use]
    pub fn with_note(mut self, note: &str) -> View {
        let above = |text: &mut String| *text = format!("{note}\n\n{text}");
        match &mut self {
            View::Buttons(ButtonsView { parts, .. }) | View::Text(TextView { parts }) => {
                if let Some(first) = parts.first_mut() {
                    above(first);
                }
            }
            View::Rich(rich) => rich.steps.iter_mut().for_each(|step| above(&mut step.text)),
        }
        self
    }

    /// The mode this view draws.
    pub fn mode(&self) -> Mode {
        match self {
            View::Buttons(_) => Mode::Buttons,
            View::Text(_) => Mode::Text,
            View::Rich(_) => Mode::Rich,
        }
    }
}

/// A one-question ask as a message with buttons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ButtonsView {
    /// Message texts, sent in order; at least one. Each fits the channel
    /// with room left for the status line added when the ask ends.
    pub parts: Vec<String>,
    /// Button rows, attached to the last part.
    pub rows: Vec<Vec<Button>>,
}

/// An ask as numbered plain text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextView {
    /// Message texts, sent in order. Each fits the channel with room left
    /// for the status line added to the last one when the ask ends.
    pub parts: Vec<String>,
}

/// An ask as a stepper: one step per question, shown one at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RichView {
    /// One step per question, in question order, nothing toggled yet.
    pub steps: Vec<Step>,
}

/// One question of a rich view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Index of the question in the ask.
    pub question: usize,
    /// 1-based position of this step.
    pub position: usize,
    /// Number of steps.
    pub total: usize,
    /// The message text (title, `1/3` progress, question); cut to fit one
    /// message with room for the status line.
    pub text: String,
    /// What kind of input the step takes.
    pub input: StepInput,
    /// Button rows under the message.
    pub rows: Vec<Vec<Button>>,
}

/// The input a step takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepInput {
    /// One click picks (single-select, confirm).
    Pick,
    /// Clicks toggle options; "Done" submits (multi-select). Channels with
    /// select menus or checkboxes ([`Capabilities::menu_options`]) draw
    /// `options` as one of those, submitted by the `OptionRef::Done` key,
    /// and the step's rows then hold no toggle buttons.
    Toggle {
        /// Option indices currently checked, ascending.
        selected: Vec<usize>,
        /// The question's options, unmarked, for a select menu.
        options: Vec<StepOption>,
    },
    /// Free text: a modal, or a forced reply where there are no modals.
    /// The "Answer…" button (`OptionRef::Other`) opens it.
    Text {
        /// Several lines are expected (`textarea`).
        multiline: bool,
        /// Short label for the input field (the header, else the question;
        /// never empty, at most 45 characters).
        label: String,
        /// Hint shown in the empty input (at most 64 characters).
        placeholder: Option<String>,
    },
}

impl StepInput {
    /// The hint for an empty text input: the placeholder, else the label
    /// (text steps only).
    pub fn hint(&self) -> Option<&str> {
        match self {
            StepInput::Text {
                placeholder, label, ..
            } => placeholder.as_deref().or(Some(label.as_str())),
            StepInput::Pick | StepInput::Toggle { .. } => None,
        }
    }
}

/// One option of a multi-select step, as a select menu or checkbox shows
/// it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepOption {
    /// Index of the option in the question.
    pub index: usize,
    /// The label (the recommended marker shown once), cut to the channel's
    /// button limit.
    pub label: String,
    /// The option's description, on one line and cut to the same limit.
    pub description: Option<String>,
    /// The option is the recommended one.
    pub recommended: bool,
}

/// One button.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    /// Callback payload ([`callback_key`]); unique within the message.
    pub key: String,
    /// What the button does (the same as `key` says).
    pub action: OptionRef,
    /// The label, already cut to the channel's limit.
    pub label: String,
    /// How prominent the button is.
    pub style: ButtonStyle,
}

/// How prominent a button is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ButtonStyle {
    /// The recommended option, a checked toggle, or the step's main action.
    Primary,
    /// An ordinary option.
    Normal,
    /// Other…, Skip and the like.
    Secondary,
}

/// Builds the view of `ask` for a channel with `caps`, in `locale`.
/// `ask_key` is the ask's short opaque key, put in every button payload.
pub fn view(ask: &Ask, ask_key: &str, caps: &Capabilities, locale: Locale) -> View {
    let budget = text_budget(caps);
    match decide(ask, caps) {
        Mode::Text => View::Text(TextView {
            parts: split_message(&text_prompt(ask, locale), budget, caps.unit),
        }),
        Mode::Buttons => match ask.questions.first() {
            Some(question) => View::Buttons(buttons_view(ask, question, ask_key, caps, locale)),
            None => View::Text(TextView {
                parts: split_message(&text_prompt(ask, locale), budget, caps.unit),
            }),
        },
        Mode::Rich => View::Rich(RichView {
            steps: (0..ask.questions.len())
                .filter_map(|index| rich_step(ask, ask_key, index, &[], caps, locale))
                .collect(),
        }),
    }
}

/// One step of a rich view with `selected` options checked (for redrawing
/// a multi-select step after a toggle). `None` when `question` is out of
/// range; indices in `selected` that are not options are ignored.
pub fn rich_step(
    ask: &Ask,
    ask_key: &str,
    question: usize,
    selected: &[usize],
    caps: &Capabilities,
    locale: Locale,
) -> Option<Step> {
    let q = ask.questions.get(question)?;
    let s = locale.strings();
    let total = ask.questions.len();
    let label_max = caps.max_button_label_chars.max(1);
    let make = |action: OptionRef, label: &str, style: ButtonStyle| Button {
        key: callback_key(ask_key, question, action),
        action,
        label: cut(label, label_max, Unit::Utf16),
        style,
    };

    let mut options = Vec::new();
    let mut controls = Vec::new();
    let mut labels_cut = false;
    let input = match q.kind {
        QuestionKind::Single | QuestionKind::Confirm => {
            options = pick_buttons(q, &make, label_max, &mut labels_cut, s);
            if q.kind == QuestionKind::Single {
                controls.push(make(OptionRef::Other, s.other, ButtonStyle::Secondary));
            }
            StepInput::Pick
        }
        QuestionKind::Multi => {
            // A channel with menus draws the options as one, and has no
            // toggle buttons to lay out.
            let as_menu = q.options.len() <= caps.menu_options;
            let mut menu = Vec::new();
            let mut checked: Vec<usize> = selected
                .iter()
                .copied()
                .filter(|&i| i < q.options.len())
                .collect();
            checked.sort_unstable();
            checked.dedup();
            for (index, choice) in q.options.iter().enumerate() {
                let on = checked.binary_search(&index).is_ok();
                let mark = if on { CHECKED } else { UNCHECKED };
                let (label, was_cut) = button_label(q, index, choice, Some(mark), label_max);
                labels_cut |= was_cut;
                let style = if on {
                    ButtonStyle::Primary
                } else {
                    ButtonStyle::Normal
                };
                if !as_menu {
                    options.push(make(OptionRef::Index(index), &label, style));
                }
                menu.push(StepOption {
                    index,
                    label: button_label(q, index, choice, None, label_max).0,
                    description: choice
                        .description
                        .as_deref()
                        .map(one_line)
                        .filter(|d| !d.is_empty())
                        .map(|d| cut(&d, label_max, Unit::Utf16)),
                    recommended: is_recommended(choice),
                });
            }
            controls.push(make(OptionRef::Done, s.done, ButtonStyle::Primary));
            controls.push(make(OptionRef::Other, s.other, ButtonStyle::Secondary));
            StepInput::Toggle {
                selected: checked,
                options: menu,
            }
        }
        QuestionKind::Text | QuestionKind::Textarea => {
            controls.push(make(OptionRef::Other, s.answer, ButtonStyle::Primary));
            let header = one_line(&q.header);
            let label = [header, one_line(&q.text)]
                .into_iter()
                .find(|l| !l.is_empty())
                .unwrap_or_else(|| s.answer.trim_end_matches('…').to_owned());
            StepInput::Text {
                multiline: q.kind == QuestionKind::Textarea,
                label: cut(&label, MAX_INPUT_LABEL_CHARS, Unit::Utf16),
                placeholder: q
                    .placeholder
                    .as_deref()
                    .map(one_line)
                    .filter(|p| !p.is_empty())
                    .map(|p| cut(&p, MAX_PLACEHOLDER_CHARS, Unit::Utf16)),
            }
        }
    };
    if has_pass(q, total > 1) {
        controls.push(make(
            OptionRef::Pass,
            s.skip_question,
            ButtonStyle::Secondary,
        ));
    }
    controls.push(make(OptionRef::Skip, s.skip, ButtonStyle::Secondary));

    let progress = (total > 1).then(|| format!("{}/{}", question + 1, total));
    let card = card(ask, q, progress.as_deref(), labels_cut, s);
    let pair = q.kind == QuestionKind::Confirm;
    Some(Step {
        question,
        position: question + 1,
        total,
        text: non_blank(&cut(&card, text_budget(caps), caps.unit)),
        input,
        rows: layout(options, controls, pair, caps),
    })
}

/// The Buttons view of a one-question ask.
fn buttons_view(
    ask: &Ask,
    q: &Question,
    ask_key: &str,
    caps: &Capabilities,
    locale: Locale,
) -> ButtonsView {
    let s = locale.strings();
    let label_max = caps.max_button_label_chars.max(1);
    let make = |action: OptionRef, label: &str, style: ButtonStyle| Button {
        key: callback_key(ask_key, 0, action),
        action,
        label: cut(label, label_max, Unit::Utf16),
        style,
    };
    let mut labels_cut = false;
    let options = pick_buttons(q, &make, label_max, &mut labels_cut, s);
    let mut controls = Vec::new();
    if q.kind != QuestionKind::Confirm {
        controls.push(make(OptionRef::Other, s.other, ButtonStyle::Secondary));
    }
    controls.push(make(OptionRef::Skip, s.skip, ButtonStyle::Secondary));
    let pair = Shape::buttons(q).is_some_and(|shape| shape.pair);
    let card = card(ask, q, None, labels_cut, s);
    let mut parts = split_message(&card, text_budget(caps), caps.unit);
    if parts.is_empty() {
        parts.push(EMPTY_TEXT.to_owned());
    }
    ButtonsView {
        parts,
        rows: layout(options, controls, pair, caps),
    }
}

/// What each option of a pick question is called, by index — its
/// options, or Yes / No for a confirm — as a person picks it by number;
/// `None` for a question that is no pick (multi-select, text).
pub fn pick_labels(q: &Question, locale: Locale) -> Option<Vec<String>> {
    let s = locale.strings();
    match q.kind {
        QuestionKind::Confirm => Some(vec![s.yes.to_owned(), s.no.to_owned()]),
        QuestionKind::Single => Some(
            q.options
                .iter()
                .map(|choice| choice.label.clone())
                .collect(),
        ),
        QuestionKind::Multi | QuestionKind::Text | QuestionKind::Textarea => None,
    }
}

/// The option buttons of a pick: one per option (recommended primary), or
/// Yes / No for confirm.
fn pick_buttons(
    q: &Question,
    make: &impl Fn(OptionRef, &str, ButtonStyle) -> Button,
    label_max: usize,
    labels_cut: &mut bool,
    s: &Strings,
) -> Vec<Button> {
    if q.kind == QuestionKind::Confirm {
        return vec![
            make(OptionRef::Index(0), s.yes, ButtonStyle::Normal),
            make(OptionRef::Index(1), s.no, ButtonStyle::Normal),
        ];
    }
    q.options
        .iter()
        .enumerate()
        .map(|(index, choice)| {
            let (label, was_cut) = button_label(q, index, choice, None, label_max);
            *labels_cut |= was_cut;
            let style = if is_recommended(choice) {
                ButtonStyle::Primary
            } else {
                ButtonStyle::Normal
            };
            make(OptionRef::Index(index), &label, style)
        })
        .collect()
}

/// The message above the controls: title and progress, the question with
/// its optional/default hints, and the option list when the buttons cannot
/// say everything (an option has a description, or a label was cut).
fn card(ask: &Ask, q: &Question, progress: Option<&str>, labels_cut: bool, s: &Strings) -> String {
    let mut out = String::new();
    let title = ask.title.as_deref().map(one_line).filter(|t| !t.is_empty());
    match (title, progress) {
        (Some(title), Some(progress)) => out.push_str(&format!("{title} · {progress}\n\n")),
        (Some(title), None) => out.push_str(&format!("{title}\n\n")),
        (None, Some(progress)) => out.push_str(&format!("{progress}\n\n")),
        (None, None) => {}
    }
    out.push_str(&question_line(q, None, &control_hints(q, s), s));
    let described = q.options.iter().any(|choice| {
        choice
            .description
            .as_deref()
            .is_some_and(|d| !d.trim().is_empty())
    });
    if q.kind.has_options() && (described || labels_cut) {
        for (index, choice) in q.options.iter().enumerate() {
            out.push('\n');
            out.push_str(&option_line(q, index, choice));
        }
    }
    out
}

/// The text room of one message, in the channel's unit: its limit less
/// the room the status line needs (a quarter of the limit at most).
fn text_budget(caps: &Capabilities) -> usize {
    let reserve = STATUS_RESERVE.min(caps.max_text_len / 4);
    caps.max_text_len.saturating_sub(reserve).max(1)
}

/// `text`, or [`EMPTY_TEXT`] when it is blank: what a platform that
/// refuses an empty text is sent.
pub fn non_blank(text: &str) -> String {
    match text.trim().is_empty() {
        true => EMPTY_TEXT.to_owned(),
        false => text.to_owned(),
    }
}

//! The render decision: native buttons, numbered text, or rich controls.
//!
//! [`decide`] and the view builder share one notion of "fits" ([`Shape`]),
//! so a view never holds more buttons or rows than the decision allowed.

use super::split::Unit;
use crate::model::{Ask, ChannelKind, Question, QuestionKind};

/// How an ask is drawn on one channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// One message with one button per option, then "Other…" and "Skip".
    Buttons,
    /// The numbered plain-text prompt, split to the channel's limit.
    Text,
    /// One step per question: toggles for multi-select, a text input for
    /// text questions, the message edited in place between steps.
    Rich,
}

impl Mode {
    /// Reads a channel's `render` setting: `buttons`, `text` or `rich`.
    pub fn parse(setting: &str) -> Option<Mode> {
        match setting.trim().to_ascii_lowercase().as_str() {
            "buttons" | "native" => Some(Mode::Buttons),
            "text" => Some(Mode::Text),
            "rich" => Some(Mode::Rich),
            _ => None,
        }
    }

    /// The setting's name: `buttons`, `text` or `rich`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Buttons => "buttons",
            Mode::Text => "text",
            Mode::Rich => "rich",
        }
    }
}

/// What a channel can draw, and how it is configured to draw it.
///
/// A message's text is measured in the unit the platform counts
/// ([`Capabilities::unit`]) and its limit keeps a margin below the
/// platform's hard limit for the adapter's own markup. Button labels and
/// other short texts are in UTF-16 units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Capabilities {
    /// The channel can show buttons (and they are not turned off).
    pub buttons: bool,
    /// Most buttons on one message.
    pub max_buttons: usize,
    /// Most buttons in one row.
    pub max_buttons_per_row: usize,
    /// Most rows of buttons on one message.
    pub max_rows: usize,
    /// Option buttons per row (a layout taste, at most `max_buttons_per_row`);
    /// control buttons (Other…, Skip, Done) go on rows of their own.
    pub options_per_row: usize,
    /// Longest button label; longer labels are cut with "…".
    pub max_button_label_chars: usize,
    /// Longest message text, in [`Capabilities::unit`].
    pub max_text_len: usize,
    /// What the platform counts a message's length in: every part of a
    /// message (the prompt, a card, a context block) is measured in it.
    pub unit: Unit,
    /// Rich mode is turned on (`render = "rich"`).
    pub rich: bool,
    /// Most options of one select menu (or checkbox group), when the
    /// channel draws a multi-select step's toggles as one menu; 0 when it
    /// draws them as toggle buttons. A menu takes one row.
    pub menu_options: usize,
}

impl Capabilities {
    /// Telegram: inline keyboards of up to 100 buttons, one option per row;
    /// no hard label limit (80 used, so no valid label is ever cut);
    /// messages of 4,096 UTF-16 units once entities are parsed out (4,000
    /// used).
    pub const TELEGRAM: Capabilities = Capabilities {
        buttons: true,
        max_buttons: 100,
        max_buttons_per_row: 8,
        max_rows: 100,
        options_per_row: 1,
        max_button_label_chars: 80,
        max_text_len: 4_000,
        unit: Unit::Utf16,
        rich: false,
        menu_options: 0,
    };

    /// Discord: 5 buttons a row, 5 rows, 80-character labels; 2,000-character
    /// messages (1,900 used); a select menu of up to 25 options.
    pub const DISCORD: Capabilities = Capabilities {
        buttons: true,
        max_buttons: 25,
        max_buttons_per_row: 5,
        max_rows: 5,
        options_per_row: 5,
        max_button_label_chars: 80,
        max_text_len: 1_900,
        unit: Unit::Utf16,
        rich: false,
        menu_options: 25,
    };

    /// Slack: a row is an actions block (up to 25 elements; 5 used for
    /// options), 75-character button text, 3,000-character sections (2,900
    /// used); a multi-select menu of up to 100 options.
    pub const SLACK: Capabilities = Capabilities {
        buttons: true,
        max_buttons: 25,
        max_buttons_per_row: 25,
        max_rows: 10,
        options_per_row: 5,
        max_button_label_chars: 75,
        max_text_len: 2_900,
        unit: Unit::Utf16,
        rich: false,
        menu_options: 100,
    };

    /// Feishu / Lark: a card (JSON 2.0) of up to 200 elements, a button
    /// per line (30 used, so the card stays within its 30 KB), 60-character
    /// button texts; 4,000-character texts; a multi-select menu (of every
    /// option askbridge allows).
    pub const FEISHU: Capabilities = Capabilities {
        buttons: true,
        max_buttons: 30,
        max_buttons_per_row: 5,
        max_rows: 30,
        options_per_row: 1,
        max_button_label_chars: 60,
        max_text_len: 4_000,
        unit: Unit::Utf16,
        rich: false,
        menu_options: 25,
    };

    /// Matrix: a poll (MSC3381) of up to 20 answers, one per line — in
    /// rich mode a multi-select step's options are one poll taking several
    /// answers; no hard limit on answer texts (80 used, as on Telegram);
    /// events up to 65,536 bytes of JSON, a text sent twice in one
    /// ([`Unit::EventBytes`]): 32,000 bytes used for it (16,000 ASCII
    /// characters, about 5,300 Chinese ones), the rest left for a poll's
    /// answers and the event's envelope.
    pub const MATRIX: Capabilities = Capabilities {
        buttons: true,
        max_buttons: 20,
        max_buttons_per_row: 1,
        max_rows: 20,
        options_per_row: 1,
        max_button_label_chars: 80,
        max_text_len: 32_000,
        unit: Unit::EventBytes,
        rich: false,
        menu_options: 20,
    };

    /// Microsoft Teams: Adaptive Cards (schema 1.5) of `Action.Execute`
    /// buttons in action sets, a row per option; a message up to 28 KB,
    /// so 4,000 characters of text (even at four bytes each, with twenty
    /// buttons, well under it); a multi-select step's options as one
    /// `Input.ChoiceSet`.
    pub const TEAMS: Capabilities = Capabilities {
        buttons: true,
        max_buttons: 20,
        max_buttons_per_row: 3,
        max_rows: 20,
        options_per_row: 1,
        max_button_label_chars: 80,
        max_text_len: 4_000,
        unit: Unit::Utf16,
        rich: false,
        menu_options: 50,
    };

    /// Email: the numbered prompt in one mail (a reply is typed, never a
    /// press), however long.
    pub const EMAIL: Capabilities = Capabilities {
        max_text_len: 100_000,
        ..Capabilities::TEXT
    };

    /// askbridge's web page: generous limits, one option per row.
    pub const WEB: Capabilities = Capabilities {
        buttons: true,
        max_buttons: 64,
        max_buttons_per_row: 8,
        max_rows: 64,
        options_per_row: 1,
        max_button_label_chars: 200,
        max_text_len: 100_000,
        unit: Unit::Utf16,
        rich: false,
        menu_options: 0,
    };

    /// Plain text only, no length limit.
    pub const TEXT: Capabilities = Capabilities {
        buttons: false,
        max_buttons: 0,
        max_buttons_per_row: 0,
        max_rows: 0,
        options_per_row: 0,
        max_button_label_chars: 0,
        max_text_len: usize::MAX,
        unit: Unit::Utf16,
        rich: false,
        menu_options: 0,
    };

    /// The default capabilities of a channel (render mode `buttons`).
    pub const fn for_channel(channel: ChannelKind) -> Capabilities {
        match channel {
            ChannelKind::Telegram => Capabilities::TELEGRAM,
            ChannelKind::Discord => Capabilities::DISCORD,
            ChannelKind::Slack => Capabilities::SLACK,
            ChannelKind::Feishu => Capabilities::FEISHU,
            ChannelKind::Matrix => Capabilities::MATRIX,
            ChannelKind::Teams => Capabilities::TEAMS,
            ChannelKind::Email => Capabilities::EMAIL,
            ChannelKind::Web | ChannelKind::Host => Capabilities::WEB,
        }
    }

    /// Applies a channel's `render` setting: `Text` turns buttons off,
    /// `Rich` turns rich mode on, `Buttons` turns it off.
    pub const fn with_mode(self, mode: Mode) -> Capabilities {
        match mode {
            Mode::Buttons => Capabilities {
                rich: false,
                ..self
            },
            Mode::Text => Capabilities {
                buttons: false,
                rich: false,
                ..self
            },
            Mode::Rich => Capabilities { rich: true, ..self },
        }
    }
}

/// Decides how `ask` is drawn on a channel with `caps`:
///
/// - [`Mode::Buttons`] when the channel shows buttons, the ask has exactly
///   one question, it is `single` or `confirm`, and its options plus
///   "Other…" and "Skip" fit the channel's buttons and rows;
/// - [`Mode::Rich`] otherwise when rich mode is on, the channel shows
///   buttons and every question fits as a step;
/// - [`Mode::Text`] in every other case.
pub fn decide(ask: &Ask, caps: &Capabilities) -> Mode {
    if !caps.buttons {
        return Mode::Text;
    }
    if let [question] = ask.questions.as_slice()
        && Shape::buttons(question).is_some_and(|shape| shape.fits(caps))
    {
        return Mode::Buttons;
    }
    let several = ask.questions.len() > 1;
    if caps.rich
        && !ask.questions.is_empty()
        && ask
            .questions
            .iter()
            .all(|question| Shape::step(question, several).is_some_and(|shape| shape.fits(caps)))
    {
        return Mode::Rich;
    }
    Mode::Text
}

/// How many buttons one question needs, and how they are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    /// Option buttons (options, toggles, or Yes/No).
    pub options: usize,
    /// Whether the options are Yes/No (kept side by side on one row).
    pub pair: bool,
    /// Control buttons (Other…, Skip, Done, Answer…, Skip question).
    pub controls: usize,
    /// Whether the options are toggles, which a channel with menus draws
    /// as one menu ([`Capabilities::menu_options`]).
    pub menu: bool,
}

impl Shape {
    /// The question as a one-question Buttons message; `None` unless it is
    /// `single` (with options) or `confirm`.
    pub fn buttons(question: &Question) -> Option<Shape> {
        match question.kind {
            QuestionKind::Single if !question.options.is_empty() => Some(Shape {
                options: question.options.len(),
                pair: false,
                controls: 2,
                menu: false,
            }),
            QuestionKind::Confirm => Some(Shape {
                options: 2,
                pair: true,
                controls: 1,
                menu: false,
            }),
            _ => None,
        }
    }

    /// The question as one step of a rich stepper of one or `several`
    /// questions; `None` for a choice question without options.
    pub fn step(question: &Question, several: bool) -> Option<Shape> {
        let pass = usize::from(has_pass(question, several));
        let (options, pair, controls) = match question.kind {
            QuestionKind::Single | QuestionKind::Multi if question.options.is_empty() => {
                return None;
            }
            QuestionKind::Single => (question.options.len(), false, 2 + pass),
            QuestionKind::Multi => (question.options.len(), false, 3),
            QuestionKind::Confirm => (2, true, 1 + pass),
            QuestionKind::Text | QuestionKind::Textarea => (0, false, 2 + pass),
        };
        Some(Shape {
            options,
            pair,
            controls,
            menu: question.kind == QuestionKind::Multi,
        })
    }

    /// Whether the buttons fit the channel: toggles drawn as one menu
    /// count as one row of one control.
    pub fn fits(&self, caps: &Capabilities) -> bool {
        let Some((option_row, control_row)) = row_sizes(self.pair, caps) else {
            return false;
        };
        let (options, option_rows) = if self.menu && self.options <= caps.menu_options {
            (1, 1)
        } else {
            (self.options, self.options.div_ceil(option_row))
        };
        let rows = option_rows + self.controls.div_ceil(control_row);
        caps.buttons && options + self.controls <= caps.max_buttons && rows <= caps.max_rows
    }
}

/// Whether a step offers "Skip question": an optional question of a
/// stepper of several that is not multi-select (where "Done" with nothing
/// checked says the same). With one question, "Skip" is enough.
pub(super) fn has_pass(question: &Question, several: bool) -> bool {
    several && !question.required && question.kind != QuestionKind::Multi
}

/// Option buttons per row and control buttons per row; `None` when the
/// channel has no room for a button at all.
fn row_sizes(pair: bool, caps: &Capabilities) -> Option<(usize, usize)> {
    if caps.max_buttons_per_row == 0 {
        return None;
    }
    let wanted = if pair { 2 } else { caps.options_per_row };
    Some((
        wanted.clamp(1, caps.max_buttons_per_row),
        caps.max_buttons_per_row,
    ))
}

/// Lays option buttons and control buttons out in rows, the way
/// [`Shape::fits`] counted them.
pub(super) fn layout<T>(
    options: Vec<T>,
    controls: Vec<T>,
    pair: bool,
    caps: &Capabilities,
) -> Vec<Vec<T>> {
    let (option_row, control_row) = row_sizes(pair, caps).unwrap_or((1, 1));
    let mut rows = Vec::new();
    push_rows(&mut rows, options, option_row);
    push_rows(&mut rows, controls, control_row);
    rows
}

fn push_rows<T>(rows: &mut Vec<Vec<T>>, items: Vec<T>, per_row: usize) {
    let mut row = Vec::with_capacity(per_row);
    for item in items {
        row.push(item);
        if row.len() == per_row {
            rows.push(std::mem::replace(&mut row, Vec::with_capacity(per_row)));
        }
    }
    if !row.is_empty() {
        rows.push(row);
    }
}

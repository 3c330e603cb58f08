//! Rendering: the render decision and the platform-neutral view.
//!
//! Everything a channel is sent is decided here, once: [`decide`] picks
//! native buttons, numbered text or rich steps for a channel's
//! [`Capabilities`]; [`view`] builds the [`View`] an adapter only draws;
//! [`text_prompt`] is the numbered plain-text prompt; [`split_message`]
//! and [`cut`] keep texts within platform limits, counted in the
//! platform's [`Unit`]; [`status_line`] is the
//! line added when an ask ends; [`context_blocks`] is an ask's context
//! block, masked ([`mask_credentials`]), split over messages and cut to
//! its head and tail past a few ([`shown_whole_in_every_chat`] says
//! whether any chat cuts it); [`callback_key`] is the opaque button
//! payload. Chat follow-ups: [`reask_prompt`] (the questions still open),
//! [`clarify_prompt`] (the candidates of an ambiguous reply),
//! [`unknown_items_prompt`] (the items of a list reply that named no
//! option), [`closing_line`]. Every fixed phrase is in one table per
//! [`Locale`].
//!
//! Pure: no I/O, no clock; the output depends only on the arguments.

mod callback;
mod context;
mod decide;
mod html;
mod locale;
mod mask;
mod split;
mod text;
mod view;

pub use callback::{CallbackRef, MAX_ASK_KEY_BYTES, OptionRef, callback_key, parse_callback_key};
pub use context::{
    Block, MAX_CONTEXT_MESSAGES, blocks_of, context_blocks, shown_whole_in_every_chat,
};
pub use decide::{Capabilities, Mode, decide};
pub use html::html_escape;
pub use locale::{Locale, Strings, fill};
pub use mask::mask_credentials;
pub use split::{Unit, cut, split_message};
pub use text::{
    EndState, clarify_prompt, closed_text, closing_line, closing_line_at, ended_line,
    not_understood, passed_on_line, place_name, reask_prompt, refusal, reminder_text, status_line,
    text_prompt, unknown_items_prompt, where_answer,
};
pub use view::{
    Button, ButtonStyle, ButtonsView, EMPTY_TEXT, RichView, Step, StepInput, StepOption, TextView,
    View, non_blank, pick_labels, rich_step, view,
};

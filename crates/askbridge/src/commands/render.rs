//! `askbridge render`: what a channel would be sent for an ask.

use askbridge_core::normalize;
use askbridge_core::render::{self, Locale};

/// Channels `render` can draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RenderChannel {
    /// The numbered plain-text prompt, as a channel without buttons sends it.
    Text,
}

/// Renders the ask in `input` (any dialect) for `channel`. Returns the text
/// to print, or the normaliser's errors as JSON.
pub fn run(
    input: &str,
    channel: RenderChannel,
    locale: Locale,
) -> Result<String, serde_json::Value> {
    let normalized = normalize::normalize_input(input).map_err(|errors| {
        let (json, _) = super::normalize::run(input);
        debug_assert!(!errors.is_empty());
        json
    })?;
    match channel {
        RenderChannel::Text => Ok(render::text_prompt(&normalized.ask, locale)),
    }
}

//! JSON wire formats, each its own serde type with conversions from the core.

pub mod api;
pub mod ask;
pub mod outcome;
pub mod resolution;
pub mod stored;

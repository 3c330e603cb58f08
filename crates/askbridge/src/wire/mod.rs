//! JSON wire formats, each its own serde type with conversions from the core.

pub mod ask;
pub mod resolution;

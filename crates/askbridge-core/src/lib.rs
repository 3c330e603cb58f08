//! askbridge-core: what an "ask the human" bridge knows, without doing any of it.
//!
//! The question model ([`model`]), dialect normalisation ([`normalize`]), the
//! render decision and neutral view ([`render`]), reply resolution
//! ([`resolve`]), the ask lifecycle as a state machine ([`lifecycle`]) and the
//! outcome handed back to the agent ([`outcome`]).
//!
//! This crate must not depend on anything that does I/O: no tokio, no HTTP,
//! no platform crate (teloxide, serenity, slack-morphism), no database, no
//! clock, no environment, no files. Time is an argument. `tests/purity.rs`
//! enforces the dependency list. Core types do not derive `Serialize`: the
//! wire formats live in the `askbridge` crate.

pub mod lifecycle;
pub mod model;
pub mod normalize;
pub mod outcome;
pub mod render;
pub mod resolve;

//! askbridge-core: what an "ask the human" bridge knows, without doing any of it.
//!
//! The question model ([`model`]), reply resolution ([`resolve`]), dialect
//! normalisation ([`normalize`]), the outcome handed back to the agent
//! ([`outcome`]), the ask lifecycle as a state machine ([`lifecycle`]) and
//! the render decision and neutral view ([`render`]), what people do in a
//! chat as every platform reports it ([`inbound`]), and the one failure
//! a chat platform's call ends in ([`failure`]), and what a coding
//! agent's hook event asks and the decision its outcome gives
//! ([`hooks`]), and what part of a mail reply the person wrote
//! ([`written`]), and the approval rules that decide a hook's call
//! without asking ([`rules`]), and the audit trail of approval decisions
//! as a hash chain ([`audit`]). In that order each module uses only the ones before it:
//! `normalize` compares labels the way the resolver does, the lifecycle
//! builds outcomes, and rendering shows asks, follow-ups and outcomes.
//! `tests/layers.rs` keeps it so.
//!
//! This crate must not depend on anything that does I/O: no tokio, no HTTP,
//! no platform crate (teloxide, serenity, slack-morphism), no database, no
//! clock, no environment, no files. Time is an argument. `tests/purity.rs`
//! enforces the dependency list. Core types do not derive `Serialize`: the
//! wire formats live in the `askbridge` crate.

pub mod audit;
pub mod failure;
pub mod hooks;
pub mod inbound;
pub mod lifecycle;
pub mod model;
pub mod normalize;
pub mod outcome;
pub mod render;
pub mod resolve;
pub mod rules;
pub mod written;

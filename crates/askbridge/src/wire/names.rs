//! The wire names of core enums as OpenAPI schemas.
//!
//! The wire types write these enums as strings (`Status::as_str`, …); the
//! core cannot know about OpenAPI, so each gets a named string schema here
//! whose values are read from the core enum itself (`ALL` and `as_str`).
//! A wire field names one with `#[schema(value_type = …)]`.

use askbridge_core::lifecycle::State;
use askbridge_core::model::ChannelKind;
use askbridge_core::outcome::{Reason, Status, Via};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// A string schema that takes exactly `names`.
fn names(names: impl IntoIterator<Item = &'static str>, description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(names))
        .description(Some(description))
        .into()
}

/// A channel: `telegram`, `discord`, `slack` or `web`.
#[derive(Debug)]
pub struct Channel;

impl PartialSchema for Channel {
    fn schema() -> RefOr<Schema> {
        names(
            ChannelKind::ALL.map(ChannelKind::as_str),
            "A channel askbridge speaks.",
        )
    }
}

impl ToSchema for Channel {}

/// An outcome's `status`: `answered` or `no_answer`.
#[derive(Debug)]
pub struct OutcomeStatus;

impl PartialSchema for OutcomeStatus {
    fn schema() -> RefOr<Schema> {
        names(
            Status::ALL.map(Status::as_str),
            "`answered`: every question was answered; `no_answer`: the ask ended \
             without a complete answer (see `reason`).",
        )
    }
}

impl ToSchema for OutcomeStatus {}

/// Why an ask ended without an answer.
#[derive(Debug)]
pub struct NoAnswerReason;

impl PartialSchema for NoAnswerReason {
    fn schema() -> RefOr<Schema> {
        names(
            Reason::ALL.map(Reason::as_str),
            "Why an ask ended without an answer: the deadline passed, the person \
             skipped it, the agent cancelled it, or it could not be delivered.",
        )
    }
}

impl ToSchema for NoAnswerReason {}

/// How an answer came in.
#[derive(Debug)]
pub struct AnswerVia;

impl PartialSchema for AnswerVia {
    fn schema() -> RefOr<Schema> {
        names(
            Via::ALL.map(Via::as_str),
            "How an answer came in: a native button, a select menu, a typed reply, \
             a modal dialog (or forced reply), or the web page and the HTTP API.",
        )
    }
}

impl ToSchema for AnswerVia {}

/// A pending ask's `status`: always `pending`.
#[derive(Debug)]
pub struct PendingStatus;

impl PartialSchema for PendingStatus {
    fn schema() -> RefOr<Schema> {
        names([State::Pending.as_str()], "Always `pending`.")
    }
}

impl ToSchema for PendingStatus {}

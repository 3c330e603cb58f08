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

/// Declares a schema type named `$name` whose values are `$names` and
/// whose description is `$description`.
macro_rules! names_schema {
    ($(#[$doc:meta])* $name:ident = $names:expr, $description:literal) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                names($names, $description)
            }
        }

        impl ToSchema for $name {}
    };
}

names_schema!(
    /// A channel: `telegram`, `discord`, `slack`, `web`, or `host` (the
    /// agent host's own dialog; it answers, nothing is posted there).
    Channel = ChannelKind::ALL.map(ChannelKind::as_str),
    "A channel askbridge speaks."
);

names_schema!(
    /// An outcome's `status`: `answered` or `no_answer`.
    OutcomeStatus = Status::ALL.map(Status::as_str),
    "`answered`: every question was answered; `no_answer`: the ask ended \
     without a complete answer (see `reason`)."
);

names_schema!(
    /// Why an ask ended without an answer.
    NoAnswerReason = Reason::ALL.map(Reason::as_str),
    "Why an ask ended without an answer: the deadline passed, the person \
     skipped it, the agent cancelled it, or it could not be delivered."
);

names_schema!(
    /// How an answer came in.
    AnswerVia = Via::ALL.map(Via::as_str),
    "How an answer came in: a native button, a select menu, a typed reply, \
     a modal dialog (or forced reply), or the web page and the HTTP API."
);

names_schema!(
    /// A pending ask's `status`: always `pending`.
    PendingStatus = [State::Pending.as_str()],
    "Always `pending`."
);

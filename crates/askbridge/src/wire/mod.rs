//! JSON wire formats, each its own serde type with conversions from the core.
//!
//! The types the HTTP API speaks also derive utoipa's `ToSchema`: the
//! OpenAPI document ([`crate::http::openapi`]) is built from them, and
//! their doc comments become its descriptions.

pub mod api;
pub mod ask;
pub mod names;
pub mod outcome;
pub mod request;
pub mod resolution;
pub mod stored;

/// Panics unless `json` fits the schema `T` derives ([`fits_schema`]).
#[cfg(test)]
#[track_caller]
pub(crate) fn assert_fits<T: utoipa::ToSchema>(json: &serde_json::Value) {
    if let Err(error) = fits_schema::<T>(json) {
        panic!("{error}");
    }
}

/// Whether `value` fits the schema `T` derives for the OpenAPI document
/// (with the schemas it refers to): how the tests check that each wire
/// type's schema says what its JSON really is.
#[cfg(test)]
pub(crate) fn fits_schema<T: utoipa::ToSchema>(value: &serde_json::Value) -> Result<(), String> {
    const DOCUMENT: &str = "urn:askbridge:schemas";
    let mut schemas = vec![(T::name().into_owned(), T::schema())];
    T::schemas(&mut schemas);
    let schemas: serde_json::Map<String, serde_json::Value> = schemas
        .into_iter()
        .map(|(name, schema)| (name, serde_json::to_value(schema).unwrap_or_default()))
        .collect();
    let document = serde_json::json!({"components": {"schemas": schemas}});
    let location = format!("{DOCUMENT}#/components/schemas/{}", T::name());
    let mut compiler = boon::Compiler::new();
    let mut compiled = boon::Schemas::new();
    let not_compiled = |error: boon::CompileError| {
        format!("the schema of {} does not compile: {error:#}", T::name())
    };
    compiler
        .add_resource(DOCUMENT, document)
        .map_err(not_compiled)?;
    let index = compiler
        .compile(&location, &mut compiled)
        .map_err(not_compiled)?;
    compiled
        .validate(value, index)
        .map_err(|error| format!("{value} does not fit {}: {error:#}", T::name()))
}

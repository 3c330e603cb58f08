//! `GET /v1/openapi.json`: the OpenAPI 3.1 document of the HTTP API,
//! derived rather than written.
//!
//! Each handler carries `#[utoipa::path]` (its method, path, parameters,
//! body and responses; its doc comment is the summary and description), and
//! the router registers handlers only through `utoipa_axum::routes!`, which
//! reads method and path from that attribute: the route table and the
//! document are one list (`api_routes` in `http`, plus the web channel's
//! event stream when it is on). Schemas are the wire types' `ToSchema`
//! derives (`crate::wire`). This module adds the frame (title, version,
//! what is not described) and what the middleware does to every route it
//! guards: the bearer requirement and its `401`, from the same rule the
//! token check uses (`auth::is_protected`).

use axum::body::Bytes;
use utoipa::openapi::path::{Operation, Parameter, ParameterBuilder, ParameterIn, PathItem};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    ContentBuilder, OpenApi as Document, Ref, RefOr, Required, ResponseBuilder, Schema,
};
use utoipa::{OpenApi, ToSchema};

use super::auth::is_protected;
use crate::wire::api::ErrorResponse;

/// The name of the bearer-token security scheme.
const BEARER: &str = "bearer";

/// The document's frame; paths and schemas come from the routes.
#[derive(OpenApi)]
#[openapi(info(
    title = "askbridge",
    description = "Ask a person a few structured questions from an AI agent, and wait for \
        the answer.\n\n\
        Every error is JSON `{\"error\": {\"code\", \"message\", \"path\"}}`. With an API \
        token configured, `/v1` and `/metrics` need `Authorization: Bearer <token>`. \
        Every query parameter a route does not know is refused (`400 invalid_query`). \
        MCP (streamable HTTP) is served at `/mcp`, the web page at `/` and the \
        platforms' webhooks under `/telegram`, `/discord`, `/slack` and `/feishu`; they are not \
        described here."
))]
struct Frame;

/// The frame the routes are added to.
pub fn frame() -> Document {
    Frame::openapi()
}

/// Completes a document built from the routes: the bearer-token scheme,
/// and on every operation the token check guards, the requirement and the
/// `401 unauthorized` it can answer.
pub fn finish(document: &mut Document) {
    let components = document.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        BEARER,
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some(
                    "The configured `api_token`; needed only when one is set.",
                ))
                .build(),
        ),
    );
    for (path, item) in &mut document.paths.paths {
        if !is_protected(path) {
            continue;
        }
        for operation in operations(item) {
            operation.security = Some(vec![SecurityRequirement::new(BEARER, [""; 0])]);
            operation.responses.responses.insert(
                "401".to_owned(),
                error_response("`unauthorized`: a missing or wrong bearer token.").into(),
            );
        }
    }
}

/// The document as the bytes `GET /v1/openapi.json` serves.
pub fn to_json(document: &Document) -> Bytes {
    Bytes::from(serde_json::to_vec(document).unwrap_or_default())
}

/// Every operation of a path.
fn operations(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.options,
        &mut item.head,
        &mut item.patch,
        &mut item.trace,
    ]
    .into_iter()
    .filter_map(Option::as_mut)
}

/// A response in the API's error shape.
fn error_response(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name(ErrorResponse::name())))
                .build(),
        )
        .build()
}

/// A parameter: its name, where it goes (only path parameters are
/// required), what it means and its schema. For the handlers'
/// hand-written `IntoParams`, which take their limits from the constants
/// the extractors check.
pub fn parameter(
    name: &str,
    place: ParameterIn,
    description: impl Into<String>,
    schema: impl Into<RefOr<Schema>>,
) -> Parameter {
    let required = if place == ParameterIn::Path {
        Required::True
    } else {
        Required::False
    };
    ParameterBuilder::new()
        .name(name)
        .parameter_in(place)
        .required(required)
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

#[cfg(test)]
mod tests {
    use askbridge_core::model::limits;
    use serde_json::{Value, json};

    use super::*;
    use crate::mcp::backend::OUTCOME_FIELDS;

    /// The document of the API's own routes (the web channel's event
    /// stream joins it in the daemon; the HTTP tests see that one).
    fn document() -> Value {
        let mut document = super::super::api_routes().into_openapi();
        finish(&mut document);
        serde_json::to_value(&document).expect("json")
    }

    fn schema<'a>(document: &'a Value, name: &str) -> &'a Value {
        let schema = &document["components"]["schemas"][name];
        assert!(schema.is_object(), "no schema {name}");
        schema
    }

    /// The schema's properties are exactly `properties`, of which
    /// `required` are required.
    #[track_caller]
    fn assert_fields(schema: &Value, properties: &[&str], required: &[&str]) {
        let names: Vec<&str> = schema["properties"]
            .as_object()
            .map(|map| map.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(names, properties, "{schema}");
        let listed: Vec<&str> = schema["required"]
            .as_array()
            .map(|list| list.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        assert_eq!(listed, required, "{schema}");
    }

    #[track_caller]
    fn assert_ref(schema: &Value, name: &str) {
        assert_eq!(
            schema["$ref"],
            format!("#/components/schemas/{name}"),
            "{schema}"
        );
    }

    #[test]
    fn openapi_ask_and_outcome_schemas_have_the_documented_fields() {
        let doc = document();
        let response = schema(&doc, "AskResponse");
        assert_ref(&response["oneOf"][0], "PendingAsk");
        assert_ref(&response["oneOf"][1], "EndedAsk");

        let pending = schema(&doc, "PendingAsk");
        let pending_fields = [
            "id",
            "status",
            "ask",
            "to",
            "createdAt",
            "expiresAt",
            "answered",
            "open",
        ];
        assert_fields(
            pending,
            &[
                &pending_fields[..],
                &["remindAt", "warnings", "places", "hostKey", "callback"],
            ]
            .concat(),
            &pending_fields,
        );
        assert_ref(&pending["properties"]["status"], "PendingStatus");
        assert_eq!(schema(&doc, "PendingStatus")["enum"], json!(["pending"]));
        assert_ref(&pending["properties"]["ask"], "CanonicalAsk");

        // The outcome's fields, as MCP hands them on; all but `failure`
        // always there.
        let outcome = schema(&doc, "Outcome");
        let always: Vec<&str> = OUTCOME_FIELDS
            .into_iter()
            .filter(|field| *field != "failure")
            .collect();
        assert_fields(outcome, &OUTCOME_FIELDS, &always);
        assert_eq!(
            schema(&doc, "OutcomeStatus")["enum"],
            json!(["answered", "no_answer"])
        );
        assert_eq!(
            schema(&doc, "NoAnswerReason")["enum"],
            json!(["timeout", "skipped", "cancelled", "delivery_failed"])
        );
        assert_eq!(
            outcome["properties"]["answers"]["additionalProperties"]["items"]["type"],
            "string"
        );
        assert_fields(
            schema(&doc, "Detail"),
            &[
                "id", "selected", "values", "other", "via", "prompts", "skipped",
            ],
            &["id", "selected", "values", "other", "via"],
        );
        assert_eq!(
            schema(&doc, "AnswerVia")["enum"],
            json!(["button", "select", "text", "modal", "web", "host"])
        );
        assert_fields(
            schema(&doc, "Responder"),
            &["channel", "userId", "name", "place"],
            &["channel", "userId", "name", "place"],
        );

        // An ended ask is the outcome's fields, then the ask.
        let ended = &schema(&doc, "EndedAsk")["allOf"];
        assert_ref(&ended[0], "Outcome");
        assert_fields(
            &ended[1],
            &["ask", "to", "createdAt", "warnings", "places", "callback"],
            &["ask", "to", "createdAt"],
        );

        // What an ask takes besides its questions, as every interface
        // reads it: several places, escalation, reminders.
        let input = schema(&doc, "AskInput");
        for field in [
            "to",
            "escalate",
            "remindAfterSeconds",
            "remindEverySeconds",
            "approval",
        ] {
            assert!(input["properties"][field].is_object(), "{field}: {input}");
        }
        // What the reader refuses, the schema says: an empty callbackUrl,
        // and remindEverySeconds without remindAfterSeconds.
        let url = &input["properties"]["callbackUrl"];
        assert_eq!(url["minLength"], 8, "{url}");
        assert!(
            url["pattern"].as_str().is_some_and(|p| p.contains("://")),
            "{url}"
        );
        let every = input["properties"]["remindEverySeconds"]["description"].as_str();
        assert!(
            every.is_some_and(|d| d.contains("Needs `remindAfterSeconds`")),
            "{input}"
        );
        assert!(schema(&doc, "CanonicalAsk")["properties"]["approval"].is_object());
        assert_fields(
            schema(&doc, "EscalationInput"),
            &["afterSeconds", "to"],
            &["afterSeconds", "to"],
        );
        assert_eq!(
            schema(&doc, "PlacesInput")["oneOf"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );

        // An ask's webhook: its URL and events, and its deliveries.
        for schema_name in ["CanonicalAsk", "AskInput"] {
            let ask = schema(&doc, schema_name);
            assert_eq!(ask["properties"]["callbackUrl"]["maxLength"], 2048, "{ask}");
            assert!(ask["properties"]["callbackEvents"].is_object(), "{ask}");
        }
        assert_eq!(
            schema(&doc, "CallbackEventName")["enum"],
            json!(["ask.posted", "ask.reminded", "ask.escalated", "ask.ended"])
        );
        assert_fields(
            schema(&doc, "Callback"),
            &["url", "events", "deliveries"],
            &["url", "events", "deliveries"],
        );
        assert_fields(
            schema(&doc, "CallbackDelivery"),
            &[
                "id",
                "event",
                "state",
                "attempts",
                "lastStatus",
                "lastError",
                "nextAttemptAt",
                "deliveredAt",
            ],
            &["id", "event", "state", "attempts"],
        );
    }

    #[test]
    fn openapi_error_and_reply_schemas_have_the_documented_fields() {
        let doc = document();
        assert_fields(schema(&doc, "Error"), &["error"], &["error"]);
        assert_fields(
            schema(&doc, "ErrorBody"),
            &["code", "message", "path", "errors"],
            &["code", "message", "path"],
        );
        assert_fields(
            schema(&doc, "ReplyResponse"),
            &["result", "ask", "stillOpen", "clarify"],
            &["result", "ask", "stillOpen", "clarify"],
        );
        assert_eq!(
            schema(&doc, "ReplyResult")["enum"],
            json!(["accepted", "answered", "ended"])
        );
        assert_fields(
            schema(&doc, "Clarify"),
            &["id", "candidates"],
            &["id", "candidates"],
        );
    }

    #[test]
    fn openapi_operations_say_what_the_routes_take_and_answer() {
        let doc = document();
        let operation = |path: &str, method: &str| {
            let operation = &doc["paths"][path][method];
            assert!(operation.is_object(), "{method} {path} is missing");
            operation.clone()
        };
        let parameters = |operation: &Value| -> Vec<String> {
            operation["parameters"]
                .as_array()
                .map(|list| {
                    list.iter()
                        .map(|p| format!("{}:{}", p["in"], p["name"]))
                        .collect()
                })
                .unwrap_or_default()
        };
        let create = operation("/v1/asks", "post");
        assert_eq!(
            parameters(&create),
            [r#""query":"wait""#, r#""header":"Idempotency-Key""#]
        );
        assert_ref(
            &create["requestBody"]["content"]["application/json"]["schema"],
            "AskRequest",
        );
        assert!(create["responses"]["201"]["headers"]["Location"].is_object());
        assert_eq!(
            parameters(&operation("/v1/asks", "get")),
            [
                r#""query":"status""#,
                r#""query":"channel""#,
                r#""query":"limit""#
            ]
        );
        assert_eq!(
            parameters(&operation("/v1/asks/{id}", "get")),
            [r#""path":"id""#, r#""query":"wait""#, r#""query":"hold""#]
        );
        assert_eq!(
            parameters(&operation("/v1/asks/{id}", "delete")),
            [r#""path":"id""#, r#""query":"because""#]
        );
        let reply = operation("/v1/asks/{id}/reply", "post");
        assert_ref(
            &reply["requestBody"]["content"]["application/json"]["schema"],
            "ReplyRequest",
        );
        assert_ref(
            &reply["responses"]["422"]["content"]["application/json"]["schema"],
            "Error",
        );

        // The bearer token guards everything but /healthz, as auth does.
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, operation) in item.as_object().expect("operations") {
                let guarded = path != "/healthz";
                assert_eq!(
                    operation["security"] == json!([{"bearer": []}]),
                    guarded,
                    "{method} {path}"
                );
                assert_eq!(
                    operation["responses"]["401"].is_object(),
                    guarded,
                    "{method} {path}"
                );
                assert!(operation["operationId"].is_string(), "{method} {path}");
                assert!(operation["summary"].is_string(), "{method} {path}");
            }
        }
        assert_eq!(
            doc["components"]["securitySchemes"]["bearer"]["scheme"],
            "bearer"
        );
    }

    /// The request schemas' limits are attribute literals; these are the
    /// core's rules they must state.
    #[test]
    fn openapi_limits_are_the_cores() {
        let doc = document();
        let ask = &schema(&doc, "AskInput")["properties"];
        assert_eq!(ask["questions"]["maxItems"], limits::MAX_QUESTIONS);
        assert_eq!(
            ask["timeoutSeconds"]["default"],
            limits::DEFAULT_TIMEOUT_SECONDS
        );
        let question = &schema(&doc, "QuestionInput")["properties"];
        assert_eq!(
            question["question"]["maxLength"],
            limits::MAX_QUESTION_CHARS
        );
        assert_eq!(question["options"]["maxItems"], limits::MAX_OPTIONS);
        let option = &schema(&doc, "CanonicalOption")["properties"];
        assert_eq!(option["label"]["maxLength"], limits::MAX_LABEL_CHARS);
    }
}

//! `GET /v1/openapi.json`: a hand-written OpenAPI 3.1 document of the
//! HTTP API. Kept next to the handlers; a test checks that it lists every
//! route the router serves.

use serde_json::{Value, json};

/// The routes this document describes, as `(method, path)`: the same list
/// the router serves (checked by the daemon's tests).
pub const ROUTES: &[(&str, &str)] = &[
    ("post", "/v1/asks"),
    ("get", "/v1/asks"),
    ("get", "/v1/asks/{id}"),
    ("delete", "/v1/asks/{id}"),
    ("post", "/v1/asks/{id}/reply"),
    ("get", "/v1/openapi.json"),
    ("get", "/healthz"),
    ("get", "/metrics"),
];

fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    })
}

fn ask_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AskResponse"}}}
    })
}

/// The OpenAPI document.
pub fn document() -> Value {
    let wait = json!({
        "name": "wait", "in": "query", "required": false,
        "description": "Seconds to wait for the outcome (0–3600; longer waits are clamped, fractions allowed).",
        "schema": {"type": "number", "minimum": 0, "maximum": 3600}
    });
    let id = json!({
        "name": "id", "in": "path", "required": true,
        "description": "The ask id (`ask_…`).",
        "schema": {"type": "string"}
    });
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "askbridge",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Ask a person a few structured questions from an AI agent, and wait for the answer. \
                Every error is JSON {\"error\": {\"code\", \"message\", \"path\"}}. With an API token configured, \
                /v1, /mcp and /metrics need `Authorization: Bearer <token>`. MCP (streamable HTTP) is served at /mcp \
                and the web page at /; they are not described here."
        },
        "security": [{"bearer": []}],
        "paths": {
            "/v1/asks": {
                "post": {
                    "operationId": "createAsk",
                    "summary": "Create an ask",
                    "description": "The body is an ask in any dialect askbridge reads (canonical / OpenClaw ask_user, \
                        Claude Code AskUserQuestion, LLM Wiki user.ask, tool-call wrappers), or \
                        {\"ask\": <dialect or assistant text>, \"to\": <target>} where `to` overrides the ask's own. \
                        With `wait`, the response comes when the ask ends or the wait is over; if the connection \
                        closes first the ask is cancelled (configurable).",
                    "parameters": [
                        wait,
                        {
                            "name": "Idempotency-Key", "in": "header", "required": false,
                            "description": "A retry with the same key returns the same ask (200); the same key with a different ask is 409.",
                            "schema": {"type": "string", "minLength": 1, "maxLength": 255}
                        }
                    ],
                    "requestBody": {
                        "required": true,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CreateAsk"}}}
                    },
                    "responses": {
                        "201": ask_response("Created; still pending. `Location` names the ask."),
                        "200": ask_response("The ask has ended, or this is a retry with a known Idempotency-Key."),
                        "400": error_response("malformed_json, invalid_query, invalid_header"),
                        "401": error_response("unauthorized"),
                        "409": error_response("idempotency_conflict"),
                        "413": error_response("body_too_large"),
                        "415": error_response("unsupported_media_type"),
                        "422": error_response("invalid_ask: `path` and `message` name the first problem, `errors` lists all"),
                        "500": error_response("internal: storage failed")
                    }
                },
                "get": {
                    "operationId": "listAsks",
                    "summary": "List asks, newest first",
                    "parameters": [
                        {"name": "status", "in": "query", "required": false,
                         "schema": {"type": "string", "enum": ["pending", "all"], "default": "all"}},
                        {"name": "channel", "in": "query", "required": false,
                         "schema": {"type": "string", "enum": ["telegram", "discord", "slack", "web"]}},
                        {"name": "limit", "in": "query", "required": false,
                         "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}}
                    ],
                    "responses": {
                        "200": {
                            "description": "The asks.",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AskList"}}}
                        },
                        "400": error_response("invalid_query"),
                        "401": error_response("unauthorized")
                    }
                }
            },
            "/v1/asks/{id}": {
                "get": {
                    "operationId": "getAsk",
                    "summary": "Get an ask; with `wait`, long-poll until it ends",
                    "description": "A long-poll that closes never cancels the ask.",
                    "parameters": [id, wait],
                    "responses": {
                        "200": ask_response("The ask now (pending or ended)."),
                        "400": error_response("invalid_query"),
                        "401": error_response("unauthorized"),
                        "404": error_response("not_found")
                    }
                },
                "delete": {
                    "operationId": "cancelAsk",
                    "summary": "Cancel a pending ask (an ended ask is returned as it is)",
                    "parameters": [id],
                    "responses": {
                        "200": ask_response("The ask after cancelling."),
                        "401": error_response("unauthorized"),
                        "404": error_response("not_found")
                    }
                }
            },
            "/v1/asks/{id}/reply": {
                "post": {
                    "operationId": "replyToAsk",
                    "summary": "Answer an ask (the web page's path; any channel's rules apply)",
                    "parameters": [id],
                    "requestBody": {
                        "required": true,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Reply"}}}
                    },
                    "responses": {
                        "200": {
                            "description": "The input was taken.",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ReplyResult"}}}
                        },
                        "400": error_response("malformed_json"),
                        "401": error_response("unauthorized"),
                        "403": error_response("not_for_you: the ask names another user"),
                        "404": error_response("not_found"),
                        "409": error_response("already_answered: \"This question was already answered.\""),
                        "413": error_response("body_too_large"),
                        "415": error_response("unsupported_media_type"),
                        "422": error_response("invalid_request (the body's shape) or invalid_answer (e.g. path answers.deploy)")
                    }
                }
            },
            "/v1/openapi.json": {
                "get": {
                    "operationId": "openapi",
                    "summary": "This document",
                    "responses": {"200": {"description": "OpenAPI 3.1", "content": {"application/json": {}}}}
                }
            },
            "/healthz": {
                "get": {
                    "operationId": "health",
                    "summary": "Liveness; never needs a token",
                    "security": [],
                    "responses": {
                        "200": {
                            "description": "Up.",
                            "content": {"application/json": {"schema": {
                                "type": "object", "properties": {"status": {"const": "ok"}}, "required": ["status"]
                            }}}
                        }
                    }
                }
            },
            "/metrics": {
                "get": {
                    "operationId": "metrics",
                    "summary": "Prometheus metrics",
                    "responses": {
                        "200": {"description": "Prometheus text format 0.0.4.", "content": {"text/plain": {"schema": {"type": "string"}}}},
                        "401": error_response("unauthorized")
                    }
                }
            }
        },
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "The configured api_token (only when one is set)."}
            },
            "schemas": schemas()
        }
    })
}

fn schemas() -> Value {
    json!({
        "Target": {
            "description": "telegram:<chat_id>[/<thread_id>], discord:<channel_id>, discord:user/<user_id>, \
                slack:<channel_id>[/<thread_ts>], web[:<session>], each with an optional @<user>; or the object form.",
            "oneOf": [
                {"type": "string"},
                {"type": "object", "properties": {
                    "channel": {"type": "string", "enum": ["telegram", "discord", "slack", "web"]},
                    "chat": {"type": ["string", "integer"]},
                    "thread": {"type": ["string", "integer"]},
                    "user": {"type": ["string", "integer"]}
                }, "required": ["channel"]}
            ]
        },
        "CreateAsk": {
            "oneOf": [
                {"$ref": "#/components/schemas/AskInput"},
                {"type": "object", "properties": {
                    "ask": {"oneOf": [
                        {"$ref": "#/components/schemas/AskInput"},
                        {"type": "string", "description": "Assistant text ending in an agent-choice block or an A/B/C list."}
                    ]},
                    "to": {"$ref": "#/components/schemas/Target"}
                }, "required": ["ask"]}
            ]
        },
        "AskInput": {
            "description": "An ask in any dialect; the canonical form is shown. Fixable mistakes are fixed and \
                listed in `warnings`; others are refused with 422 invalid_ask.",
            "type": "object",
            "properties": {
                "to": {"$ref": "#/components/schemas/Target"},
                "title": {"type": "string"},
                "questions": {"type": "array", "minItems": 1, "maxItems": 12, "items": {"$ref": "#/components/schemas/QuestionInput"}},
                "timeoutSeconds": {"type": "integer", "minimum": 30, "maximum": 3600, "default": 900}
            }
        },
        "QuestionInput": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "snake_case; derived from the header when absent"},
                "header": {"type": "string", "maxLength": 12},
                "question": {"type": "string", "maxLength": 2000},
                "type": {"type": "string", "enum": ["single", "multi", "text", "textarea", "confirm"]},
                "multiSelect": {"type": "boolean"},
                "options": {"type": "array", "minItems": 2, "maxItems": 25, "items": {"oneOf": [
                    {"type": "string"},
                    {"type": "object", "properties": {
                        "label": {"type": "string", "maxLength": 64},
                        "description": {"type": "string"},
                        "value": {"type": "string"},
                        "recommended": {"type": "boolean"}
                    }, "required": ["label"]}
                ]}},
                "default": {},
                "placeholder": {"type": "string"},
                "required": {"type": "boolean", "default": true}
            },
            "required": ["question"]
        },
        "CanonicalAsk": {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "questions": {"type": "array", "items": {"type": "object", "properties": {
                    "id": {"type": "string"},
                    "header": {"type": "string"},
                    "question": {"type": "string"},
                    "type": {"type": "string", "enum": ["single", "multi", "text", "textarea", "confirm"]},
                    "options": {"type": "array", "items": {"type": "object", "properties": {
                        "label": {"type": "string"},
                        "description": {"type": "string"},
                        "value": {"type": "string"},
                        "recommended": {"type": "boolean"},
                        "prompt": {"type": "string"}
                    }, "required": ["label"]}},
                    "default": {"type": "array", "items": {"type": "string"}},
                    "placeholder": {"type": "string"},
                    "required": {"type": "boolean"},
                    "letters": {"type": "boolean"}
                }, "required": ["id", "header", "question", "type"]}},
                "timeoutSeconds": {"type": "integer"},
                "to": {"type": "string"}
            },
            "required": ["questions", "timeoutSeconds"]
        },
        "Problem": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "message": {"type": "string"}},
            "required": ["path", "message"]
        },
        "PendingAsk": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "status": {"const": "pending"},
                "ask": {"$ref": "#/components/schemas/CanonicalAsk"},
                "to": {"type": "string"},
                "createdAt": {"type": "string", "format": "date-time"},
                "expiresAt": {"type": "string", "format": "date-time"},
                "answered": {"type": "array", "items": {"type": "string"}, "description": "Question ids answered so far."},
                "open": {"type": "array", "items": {"type": "string"}, "description": "Question ids still open."},
                "warnings": {"type": "array", "items": {"$ref": "#/components/schemas/Problem"},
                             "description": "Fixes made to the ask; only in the response that created it."}
            },
            "required": ["id", "status", "ask", "to", "createdAt", "expiresAt", "answered", "open"]
        },
        "EndedAsk": {
            "description": "The outcome plus the ask.",
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "status": {"type": "string", "enum": ["answered", "no_answer"]},
                "reason": {"type": ["string", "null"], "enum": ["timeout", "skipped", "cancelled", "delivery_failed", null]},
                "failure": {"type": "string", "description": "The platform's reason for a delivery failure."},
                "answers": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
                "details": {"type": "array", "items": {"type": "object", "properties": {
                    "id": {"type": "string"},
                    "selected": {"type": "array", "items": {"type": "string"}},
                    "values": {"type": "array", "items": {"type": "string"}},
                    "other": {"type": ["string", "null"]},
                    "via": {"type": "string", "enum": ["button", "select", "text", "modal", "web"]},
                    "prompts": {"type": "array", "items": {"type": "string"}},
                    "skipped": {"type": "boolean"}
                }, "required": ["id", "selected", "values", "other", "via"]}},
                "answeredBy": {"oneOf": [{"type": "null"}, {"type": "object", "properties": {
                    "channel": {"type": "string"},
                    "userId": {"type": "string"},
                    "name": {"type": ["string", "null"]}
                }, "required": ["channel", "userId", "name"]}]},
                "answeredAt": {"type": "string", "format": "date-time"},
                "text": {"type": "string"},
                "continuation": {"type": "string"},
                "ask": {"$ref": "#/components/schemas/CanonicalAsk"},
                "to": {"type": "string"},
                "createdAt": {"type": "string", "format": "date-time"},
                "warnings": {"type": "array", "items": {"$ref": "#/components/schemas/Problem"}}
            },
            "required": ["id", "status", "reason", "answers", "details", "answeredBy", "answeredAt", "text",
                         "continuation", "ask", "to", "createdAt"]
        },
        "AskResponse": {
            "oneOf": [
                {"$ref": "#/components/schemas/PendingAsk"},
                {"$ref": "#/components/schemas/EndedAsk"}
            ]
        },
        "AskList": {
            "type": "object",
            "properties": {"asks": {"type": "array", "items": {"$ref": "#/components/schemas/AskResponse"}}},
            "required": ["asks"]
        },
        "Reply": {
            "type": "object",
            "description": "Exactly one of `text` (resolved like a typed chat reply, e.g. \"Q1: 2\\nQ2: staging\") \
                or `answers` (question id → labels or own words; a string, true/false or null are accepted too).",
            "properties": {
                "text": {"type": "string"},
                "answers": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
                "user": {"type": "object", "properties": {
                    "id": {"type": "string", "default": "web"},
                    "name": {"type": "string"}
                }, "additionalProperties": false}
            },
            "additionalProperties": false
        },
        "ReplyResult": {
            "type": "object",
            "properties": {
                "result": {"type": "string", "enum": ["accepted", "answered", "ended"],
                           "description": "accepted: answers taken, still pending; answered: complete; ended: ended otherwise (skip)."},
                "ask": {"$ref": "#/components/schemas/AskResponse"},
                "still_open": {"type": "array", "items": {"type": "string"}},
                "clarify": {"type": "array", "items": {"type": "object", "properties": {
                    "id": {"type": "string"},
                    "candidates": {"type": "array", "items": {"type": "string"}}
                }, "required": ["id", "candidates"]}}
            },
            "required": ["result", "ask", "still_open", "clarify"]
        },
        "Error": {
            "type": "object",
            "properties": {"error": {"type": "object", "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "path": {"type": ["string", "null"]},
                "errors": {"type": "array", "items": {"$ref": "#/components/schemas/Problem"}}
            }, "required": ["code", "message", "path"]}},
            "required": ["error"]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openapi_lists_every_route_and_resolves_refs() {
        let doc = document();
        for (method, path) in ROUTES {
            assert!(
                doc["paths"][path][method].is_object(),
                "{method} {path} is missing"
            );
        }
        let text = doc.to_string();
        for reference in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let name = reference.split('"').next().unwrap_or("");
            assert!(
                doc["components"]["schemas"][name].is_object(),
                "dangling $ref {name}"
            );
        }
    }
}

//! Answers and Discord's error bodies, with the exact messages and codes
//! Discord sends (serenity surfaces them as `ErrorResponse { status_code,
//! error: DiscordJsonError { code, message, errors } }`).

use serde_json::{Map, Value, json};

use super::rate::Headers;

/// One of Discord's JSON errors: HTTP status, JSON `code`, `message`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub(crate) status: u16,
    pub(crate) code: u32,
    pub(crate) message: &'static str,
}

/// The errors the fake answers, as Discord words them.
pub(crate) mod api {
    use super::ApiError;

    const fn error(status: u16, code: u32, message: &'static str) -> ApiError {
        ApiError {
            status,
            code,
            message,
        }
    }

    pub(crate) const UNAUTHORIZED: ApiError = error(401, 0, "401: Unauthorized");
    pub(crate) const NOT_FOUND: ApiError = error(404, 0, "404: Not Found");
    pub(crate) const METHOD_NOT_ALLOWED: ApiError = error(405, 0, "405: Method Not Allowed");
    pub(crate) const UNKNOWN_CHANNEL: ApiError = error(404, 10003, "Unknown Channel");
    pub(crate) const UNKNOWN_MESSAGE: ApiError = error(404, 10008, "Unknown Message");
    pub(crate) const UNKNOWN_WEBHOOK: ApiError = error(404, 10015, "Unknown Webhook");
    pub(crate) const UNKNOWN_INTERACTION: ApiError = error(404, 10062, "Unknown interaction");
    pub(crate) const UNKNOWN_COMMAND: ApiError = error(404, 10063, "Unknown application command");
    pub(crate) const NOT_APPLICATION_OWNER: ApiError = error(
        403,
        20012,
        "You are not authorized to perform this action on this application",
    );
    pub(crate) const MAX_CHAT_INPUT_COMMANDS: ApiError = error(
        400,
        30032,
        "Maximum number of application commands reached (100)",
    );
    pub(crate) const MAX_CONTEXT_MENU_COMMANDS: ApiError = error(
        400,
        30032,
        "Maximum number of application commands reached (15)",
    );
    pub(crate) const MAX_ENTRY_POINT_COMMANDS: ApiError = error(
        400,
        30032,
        "Maximum number of application commands reached (1)",
    );
    pub(crate) const ALREADY_ACKNOWLEDGED: ApiError =
        error(400, 40060, "Interaction has already been acknowledged.");
    pub(crate) const COMMAND_NAME_TAKEN: ApiError = error(
        400,
        40041,
        "An application command with that name already exists",
    );
    pub(crate) const MISSING_ACCESS: ApiError = error(403, 50001, "Missing Access");
    pub(crate) const NOT_AUTHOR: ApiError =
        error(403, 50005, "Cannot edit a message authored by another user");
    pub(crate) const EMPTY_MESSAGE: ApiError = error(400, 50006, "Cannot send an empty message");
    pub(crate) const CANNOT_DM: ApiError = error(403, 50007, "Cannot send messages to this user");
    pub(crate) const MISSING_PERMISSIONS: ApiError = error(403, 50013, "Missing Permissions");
    pub(crate) const INVALID_WEBHOOK_TOKEN: ApiError = error(401, 50027, "Invalid Webhook Token");
    pub(crate) const INVALID_JSON: ApiError =
        error(400, 50109, "The request body contains invalid JSON.");
}

/// One entry of an `Invalid Form Body` error tree: where, and Discord's
/// error code and message for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub(crate) path: Vec<String>,
    pub(crate) code: &'static str,
    pub(crate) message: String,
}

impl FieldError {
    pub(crate) fn new(path: &[String], code: &'static str, message: impl Into<String>) -> Self {
        FieldError {
            path: path.to_vec(),
            code,
            message: message.into(),
        }
    }
}

/// Discord's form-error messages (`errors` tree entries).
pub(crate) mod form {
    use super::FieldError;

    pub(crate) fn required(path: &[String]) -> FieldError {
        FieldError::new(path, "BASE_TYPE_REQUIRED", "This field is required")
    }

    pub(crate) fn max_length(path: &[String], max: usize) -> FieldError {
        FieldError::new(
            path,
            "BASE_TYPE_MAX_LENGTH",
            format!("Must be {max} or fewer in length."),
        )
    }

    pub(crate) fn min_length(path: &[String], min: usize) -> FieldError {
        FieldError::new(
            path,
            "BASE_TYPE_MIN_LENGTH",
            format!("Must be {min} or more in length."),
        )
    }

    pub(crate) fn bad_length(path: &[String], min: usize, max: usize) -> FieldError {
        FieldError::new(
            path,
            "BASE_TYPE_BAD_LENGTH",
            format!("Must be between {min} and {max} in length."),
        )
    }

    pub(crate) fn number_max(path: &[String], max: u64) -> FieldError {
        FieldError::new(
            path,
            "NUMBER_TYPE_MAX",
            format!("int value should be less than or equal to {max}."),
        )
    }

    pub(crate) fn number_min(path: &[String], min: u64) -> FieldError {
        FieldError::new(
            path,
            "NUMBER_TYPE_MIN",
            format!("int value should be greater than or equal to {min}."),
        )
    }

    pub(crate) fn choices(path: &[String], choices: &[u64]) -> FieldError {
        let list = choices
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        FieldError::new(
            path,
            "BASE_TYPE_CHOICES",
            format!("Value must be one of ({list})."),
        )
    }

    pub(crate) fn not_snowflake(path: &[String], value: &str) -> FieldError {
        FieldError::new(
            path,
            "NUMBER_TYPE_COERCE",
            format!("Value \"{value}\" is not snowflake."),
        )
    }

    pub(crate) fn component_type_invalid(path: &[String]) -> FieldError {
        FieldError::new(
            path,
            "COMPONENT_TYPE_INVALID",
            "The specified component type is invalid in this context",
        )
    }

    pub(crate) fn width_exceeded(path: &[String]) -> FieldError {
        FieldError::new(
            path,
            "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
            "The specified component exceeds the maximum width",
        )
    }

    pub(crate) fn custom_id_duplicated(path: &[String]) -> FieldError {
        FieldError::new(
            path,
            "COMPONENT_CUSTOM_ID_DUPLICATED",
            "Component custom id cannot be duplicated",
        )
    }

    pub(crate) fn custom_id_required(path: &[String]) -> FieldError {
        FieldError::new(
            path,
            "BUTTON_COMPONENT_CUSTOM_ID_REQUIRED",
            "A custom id is required",
        )
    }

    pub(crate) fn custom_id_and_url(path: &[String]) -> FieldError {
        FieldError::new(
            path,
            "BUTTON_COMPONENT_CUSTOM_ID_URL_MUTUALLY_EXCLUSIVE",
            "A custom id and url cannot both be specified",
        )
    }

    pub(crate) fn option_value_duplicated(path: &[String]) -> FieldError {
        FieldError::new(
            path,
            "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED",
            "The specified option value is already used",
        )
    }

    pub(crate) fn too_many_defaults(path: &[String]) -> FieldError {
        FieldError::new(
            path,
            "SELECT_COMPONENT_TOO_MANY_DEFAULT_VALUES",
            "The specified number of default values exceeds the specified maximum values",
        )
    }

    pub(crate) fn unknown_reply(path: &[String]) -> FieldError {
        FieldError::new(path, "REPLIES_UNKNOWN_MESSAGE", "Unknown message")
    }

    pub(crate) fn not_a_list(path: &[String]) -> FieldError {
        FieldError::new(
            path,
            "LIST_TYPE_CONVERT",
            "Only iterables may be used in a ListType",
        )
    }

    pub(crate) fn not_a_dict(path: &[String]) -> FieldError {
        FieldError::new(
            path,
            "DICT_TYPE_CONVERT",
            "Only dictionaries may be used in a DictType",
        )
    }

    pub(crate) fn regex(path: &[String]) -> FieldError {
        FieldError::new(
            path,
            "STRING_TYPE_REGEX",
            "String value did not match validation regex.",
        )
    }

    pub(crate) fn invalid_command_name(path: &[String]) -> FieldError {
        FieldError::new(
            path,
            "APPLICATION_COMMAND_INVALID_NAME",
            "Command name is invalid",
        )
    }

    pub(crate) fn duplicate_command_name(path: &[String]) -> FieldError {
        FieldError::new(
            path,
            "APPLICATION_COMMANDS_DUPLICATE_NAME",
            "Application command names must be unique",
        )
    }
}

/// An answer: status, JSON body (none for `204`), extra headers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Option<Value>,
    pub(crate) headers: Headers,
}

impl Reply {
    /// `200` with a JSON body.
    pub(crate) fn ok(body: Value) -> Reply {
        Reply {
            status: 200,
            body: Some(body),
            headers: Headers::new(),
        }
    }

    /// `201 Created` with a JSON body.
    pub(crate) fn created(body: Value) -> Reply {
        Reply {
            status: 201,
            ..Reply::ok(body)
        }
    }

    /// `204 No Content`.
    pub(crate) fn no_content() -> Reply {
        Reply {
            status: 204,
            body: None,
            headers: Headers::new(),
        }
    }

    /// One of Discord's JSON errors.
    pub(crate) fn api(error: ApiError) -> Reply {
        Reply {
            status: error.status,
            body: Some(json!({ "message": error.message, "code": error.code })),
            headers: Headers::new(),
        }
    }

    /// `400 Invalid Form Body` with the `errors` tree.
    pub(crate) fn form(errors: &[FieldError]) -> Reply {
        Reply {
            status: 400,
            body: Some(json!({
                "message": "Invalid Form Body",
                "code": 50035,
                "errors": error_tree(errors),
            })),
            headers: Headers::new(),
        }
    }

    /// `429` with Discord's body.
    pub(crate) fn rate_limited(retry_after: f64, global: bool, headers: Headers) -> Reply {
        Reply {
            status: 429,
            body: Some(json!({
                "message": "You are being rate limited.",
                "retry_after": retry_after,
                "global": global,
            })),
            headers,
        }
    }

    /// Whether the status is 2xx.
    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// `{"content": {"_errors": [{"code": …, "message": …}]}, "components":
/// {"0": {…}}}`: the nested form Discord uses (serenity flattens it to
/// `path: "components.0.custom_id"`).
pub(crate) fn error_tree(errors: &[FieldError]) -> Value {
    let mut root = Map::new();
    'errors: for error in errors {
        let mut node = &mut root;
        for key in &error.path {
            let child = node
                .entry(key.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            if !child.is_object() {
                *child = Value::Object(Map::new());
            }
            let Some(map) = child.as_object_mut() else {
                continue 'errors;
            };
            node = map;
        }
        let list = node
            .entry("_errors".to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = list {
            list.push(json!({ "code": error.code, "message": error.message }));
        }
    }
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|part| (*part).to_owned()).collect()
    }

    #[test]
    fn nested_error_tree() {
        let tree = error_tree(&[
            form::max_length(&path(&["content"]), 2000),
            form::custom_id_duplicated(&path(&["components", "0", "components", "1", "custom_id"])),
            form::max_length(&path(&["components", "0", "components", "1", "label"]), 80),
        ]);
        assert_eq!(
            tree,
            json!({
                "content": {"_errors": [
                    {"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}
                ]},
                "components": {"0": {"components": {"1": {
                    "custom_id": {"_errors": [{
                        "code": "COMPONENT_CUSTOM_ID_DUPLICATED",
                        "message": "Component custom id cannot be duplicated"
                    }]},
                    "label": {"_errors": [{
                        "code": "BASE_TYPE_MAX_LENGTH",
                        "message": "Must be 80 or fewer in length."
                    }]}
                }}}}
            })
        );
    }
}

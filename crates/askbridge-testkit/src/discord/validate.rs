//! Discord's rules for message bodies, components and modals, reported as
//! `Invalid Form Body` entries (code `50035`) with Discord's paths, codes and
//! messages.
//!
//! Limits (from Discord's component reference): content ≤ 2000 characters;
//! ≤ 5 action rows; a row holds 1–5 buttons or one select menu; button labels
//! ≤ 80; `custom_id` 1–100 characters and unique within the message; string
//! selects have 1–25 options with label, value and description ≤ 100,
//! `placeholder` ≤ 150, `min_values` 0–25 (default 1), `max_values` 1–25
//! (default 1, at most the number of options); modals have `custom_id`
//! 1–100, `title` ≤ 45 and 1–5 rows of one text input each (label ≤ 45,
//! style 1 or 2, `min_length` 0–4000, `max_length` 1–4000, value ≤ 4000,
//! placeholder ≤ 100).
//!
//! Application commands (from Discord's application command reference):
//! `type` 1–4 (default 1, CHAT_INPUT); `name` 1–32 characters, and for
//! CHAT_INPUT (and PRIMARY_ENTRY_POINT) commands matching
//! `^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$` in lower case (letters
//! with a lowercase variant must use it); `description` 1–100 characters
//! for CHAT_INPUT commands; at most 25 options, each with a `type` 1–11, a
//! name under the same rules, a description of 1–100 characters, at most 25
//! `choices` and (sub-commands and groups) at most 25 nested options.

use std::collections::HashSet;

use serde_json::Value;

use super::errors::{FieldError, form};
use super::util::{char_len, str_field, u64_field};

/// The longest message content.
pub(crate) const MAX_CONTENT: usize = 2000;
/// The most action rows in a message.
pub(crate) const MAX_ROWS: usize = 5;
/// The most buttons in a row.
pub(crate) const MAX_BUTTONS: usize = 5;
/// The longest button label.
pub(crate) const MAX_BUTTON_LABEL: usize = 80;
/// The longest `custom_id`.
pub(crate) const MAX_CUSTOM_ID: usize = 100;
/// The most options of a string select.
pub(crate) const MAX_OPTIONS: usize = 25;
/// The longest option label, value or description.
pub(crate) const MAX_OPTION_TEXT: usize = 100;
/// The longest select placeholder.
pub(crate) const MAX_SELECT_PLACEHOLDER: usize = 150;
/// The most values a select can take.
pub(crate) const MAX_SELECT_VALUES: u64 = 25;
/// The longest modal title.
pub(crate) const MAX_MODAL_TITLE: usize = 45;
/// The longest text input label.
pub(crate) const MAX_INPUT_LABEL: usize = 45;
/// The longest text input value (and `min_length`/`max_length` bound).
pub(crate) const MAX_INPUT_VALUE: u64 = 4000;
/// The longest text input placeholder.
pub(crate) const MAX_INPUT_PLACEHOLDER: usize = 100;

/// Component `type` values.
pub(crate) mod kind {
    pub(crate) const ACTION_ROW: u64 = 1;
    pub(crate) const BUTTON: u64 = 2;
    pub(crate) const STRING_SELECT: u64 = 3;
    pub(crate) const TEXT_INPUT: u64 = 4;
    pub(crate) const USER_SELECT: u64 = 5;
    pub(crate) const CHANNEL_SELECT: u64 = 8;
}

/// Application command `type`s: CHAT_INPUT, USER, MESSAGE,
/// PRIMARY_ENTRY_POINT.
pub(crate) mod command_kind {
    pub(crate) const CHAT_INPUT: u64 = 1;
    pub(crate) const USER: u64 = 2;
    pub(crate) const MESSAGE: u64 = 3;
    pub(crate) const PRIMARY_ENTRY_POINT: u64 = 4;
    pub(crate) const ALL: [u64; 4] = [CHAT_INPUT, USER, MESSAGE, PRIMARY_ENTRY_POINT];
}

/// The longest command or option name.
pub(crate) const MAX_COMMAND_NAME: usize = 32;
/// The longest command or option description.
pub(crate) const MAX_COMMAND_DESCRIPTION: usize = 100;
/// The most options of a command (or of a sub-command), and choices of an
/// option.
pub(crate) const MAX_COMMAND_OPTIONS: usize = 25;
/// Option `type`s: SUB_COMMAND (1) … ATTACHMENT (11).
const OPTION_TYPES: [u64; 11] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];

/// Button `style` of link buttons (no `custom_id`, no interaction).
pub(crate) const LINK_STYLE: u64 = 5;
/// Button `style` of premium buttons (no `custom_id`, no interaction).
pub(crate) const PREMIUM_STYLE: u64 = 6;

fn at(base: &[String], key: impl ToString) -> Vec<String> {
    let mut path = base.to_vec();
    path.push(key.to_string());
    path
}

/// Checks a string field: required or not, at most `max` characters.
fn text(
    object: &Value,
    key: &str,
    base: &[String],
    required: bool,
    max: usize,
    errors: &mut Vec<FieldError>,
) -> Option<String> {
    let path = at(base, key);
    match object.get(key) {
        None | Some(Value::Null) => {
            if required {
                errors.push(form::required(&path));
            }
            None
        }
        Some(Value::String(value)) => {
            if required && value.is_empty() {
                errors.push(form::bad_length(&path, 1, max));
            } else if char_len(value) > max {
                errors.push(form::max_length(&path, max));
            }
            Some(value.clone())
        }
        Some(other) => {
            let value = other.to_string();
            if char_len(&value) > max {
                errors.push(form::max_length(&path, max));
            }
            Some(value)
        }
    }
}

/// Checks an integer field against `min..=max`.
fn bounded(
    object: &Value,
    key: &str,
    base: &[String],
    min: u64,
    max: u64,
    errors: &mut Vec<FieldError>,
) -> Option<u64> {
    let value = object.get(key)?;
    if value.is_null() {
        return None;
    }
    let path = at(base, key);
    match value.as_i64() {
        Some(number) if number < 0 || (number as u64) < min => {
            errors.push(form::number_min(&path, min));
            None
        }
        Some(number) if number as u64 > max => {
            errors.push(form::number_max(&path, max));
            None
        }
        Some(number) => Some(number as u64),
        None => {
            errors.push(form::number_min(&path, min));
            None
        }
    }
}

/// The fields of a message body (create, edit, interaction response or
/// webhook message) that Discord validates: `content` and `components`.
pub(crate) fn message(body: &Value, base: &[String]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(content) = str_field(body, "content")
        && char_len(content) > MAX_CONTENT
    {
        errors.push(form::max_length(&at(base, "content"), MAX_CONTENT));
    }
    if let Some(components) = body.get("components") {
        message_components(components, &at(base, "components"), &mut errors);
    }
    errors
}

fn message_components(components: &Value, path: &[String], errors: &mut Vec<FieldError>) {
    let Some(rows) = components.as_array() else {
        return;
    };
    if rows.len() > MAX_ROWS {
        errors.push(form::max_length(path, MAX_ROWS));
        return;
    }
    let mut custom_ids = HashSet::new();
    for (r, row) in rows.iter().enumerate() {
        let row_path = at(path, r);
        if u64_field(row, "type") != Some(kind::ACTION_ROW) {
            errors.push(form::component_type_invalid(&row_path));
            continue;
        }
        let children_path = at(&row_path, "components");
        let children = row
            .get("components")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if children.is_empty() || children.len() > MAX_BUTTONS {
            errors.push(form::bad_length(&children_path, 1, MAX_BUTTONS));
            continue;
        }
        let has_select = children.iter().any(is_select);
        if has_select && children.len() > 1 {
            // A select takes the whole width of its row.
            for c in 1..children.len() {
                errors.push(form::width_exceeded(&at(&children_path, c)));
            }
            continue;
        }
        for (c, child) in children.iter().enumerate() {
            let child_path = at(&children_path, c);
            match u64_field(child, "type") {
                Some(kind::BUTTON) => button(child, &child_path, &mut custom_ids, errors),
                Some(_) if is_select(child) => {
                    select(child, &child_path, &mut custom_ids, errors);
                }
                _ => errors.push(form::component_type_invalid(&child_path)),
            }
        }
    }
}

/// Whether a component is a select menu (string, user, role, mentionable or
/// channel).
pub(crate) fn is_select(component: &Value) -> bool {
    matches!(
        u64_field(component, "type"),
        Some(kind::STRING_SELECT | kind::USER_SELECT..=kind::CHANNEL_SELECT)
    )
}

fn custom_id(
    component: &Value,
    path: &[String],
    seen: &mut HashSet<String>,
    errors: &mut Vec<FieldError>,
    required: fn(&[String]) -> FieldError,
) {
    let id_path = at(path, "custom_id");
    match str_field(component, "custom_id") {
        None | Some("") => errors.push(required(&id_path)),
        Some(id) if char_len(id) > MAX_CUSTOM_ID => {
            errors.push(form::max_length(&id_path, MAX_CUSTOM_ID));
        }
        Some(id) => {
            if !seen.insert(id.to_owned()) {
                errors.push(form::custom_id_duplicated(&id_path));
            }
        }
    }
}

fn button(
    button: &Value,
    path: &[String],
    seen: &mut HashSet<String>,
    errors: &mut Vec<FieldError>,
) {
    text(button, "label", path, false, MAX_BUTTON_LABEL, errors);
    match u64_field(button, "style") {
        None => errors.push(form::required(&at(path, "style"))),
        Some(1..=4) => custom_id(button, path, seen, errors, form::custom_id_required),
        Some(LINK_STYLE) => {
            if button.get("custom_id").is_some_and(|id| !id.is_null()) {
                errors.push(form::custom_id_and_url(&at(path, "custom_id")));
            }
            if str_field(button, "url").is_none_or(str::is_empty) {
                errors.push(form::required(&at(path, "url")));
            }
        }
        Some(PREMIUM_STYLE) => {
            if button.get("sku_id").is_none_or(Value::is_null) {
                errors.push(form::required(&at(path, "sku_id")));
            }
        }
        Some(_) => errors.push(form::choices(&at(path, "style"), &[1, 2, 3, 4, 5, 6])),
    }
}

fn select(
    select: &Value,
    path: &[String],
    seen: &mut HashSet<String>,
    errors: &mut Vec<FieldError>,
) {
    custom_id(select, path, seen, errors, form::required);
    text(
        select,
        "placeholder",
        path,
        false,
        MAX_SELECT_PLACEHOLDER,
        errors,
    );
    let before = errors.len();
    let min = bounded(select, "min_values", path, 0, MAX_SELECT_VALUES, errors);
    let max = bounded(select, "max_values", path, 1, MAX_SELECT_VALUES, errors);
    let min_ok = errors.len() == before;
    let (min, max) = (min.unwrap_or(1), max.unwrap_or(1));
    if min_ok && min > max {
        errors.push(form::number_max(&at(path, "min_values"), max));
    }
    if u64_field(select, "type") != Some(kind::STRING_SELECT) {
        return;
    }
    let options_path = at(path, "options");
    let options = select
        .get("options")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if options.is_empty() || options.len() > MAX_OPTIONS {
        errors.push(form::bad_length(&options_path, 1, MAX_OPTIONS));
        return;
    }
    let mut values = HashSet::new();
    let mut defaults = 0_u64;
    for (o, option) in options.iter().enumerate() {
        let option_path = at(&options_path, o);
        text(option, "label", &option_path, true, MAX_OPTION_TEXT, errors);
        let value = text(option, "value", &option_path, true, MAX_OPTION_TEXT, errors);
        text(
            option,
            "description",
            &option_path,
            false,
            MAX_OPTION_TEXT,
            errors,
        );
        if let Some(value) = value
            && !values.insert(value)
        {
            errors.push(form::option_value_duplicated(&option_path));
        }
        if option.get("default").and_then(Value::as_bool) == Some(true) {
            defaults += 1;
        }
    }
    if min_ok && max as usize > options.len() {
        errors.push(form::min_length(&options_path, max as usize));
    } else if defaults > max {
        errors.push(form::too_many_defaults(&options_path));
    }
}

/// The `data` of a MODAL (9) interaction response.
pub(crate) fn modal(data: &Value, base: &[String]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    let modal_id = at(base, "custom_id");
    match str_field(data, "custom_id") {
        None | Some("") => errors.push(form::required(&modal_id)),
        Some(id) if char_len(id) > MAX_CUSTOM_ID => {
            errors.push(form::max_length(&modal_id, MAX_CUSTOM_ID));
        }
        Some(_) => {}
    }
    text(data, "title", base, true, MAX_MODAL_TITLE, &mut errors);
    let rows_path = at(base, "components");
    let rows = data
        .get("components")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if rows.is_empty() || rows.len() > MAX_ROWS {
        errors.push(form::bad_length(&rows_path, 1, MAX_ROWS));
        return errors;
    }
    for (r, row) in rows.iter().enumerate() {
        let row_path = at(&rows_path, r);
        if u64_field(row, "type") != Some(kind::ACTION_ROW) {
            errors.push(form::component_type_invalid(&row_path));
            continue;
        }
        let children_path = at(&row_path, "components");
        let children = row
            .get("components")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if children.len() != 1 {
            errors.push(form::bad_length(&children_path, 1, 1));
            continue;
        }
        let input_path = at(&children_path, 0);
        let input = &children[0];
        if u64_field(input, "type") != Some(kind::TEXT_INPUT) {
            errors.push(form::component_type_invalid(&input_path));
            continue;
        }
        custom_id(input, &input_path, &mut seen, &mut errors, form::required);
        match u64_field(input, "style") {
            Some(1 | 2) => {}
            None => errors.push(form::required(&at(&input_path, "style"))),
            Some(_) => errors.push(form::choices(&at(&input_path, "style"), &[1, 2])),
        }
        text(
            input,
            "label",
            &input_path,
            true,
            MAX_INPUT_LABEL,
            &mut errors,
        );
        bounded(
            input,
            "min_length",
            &input_path,
            0,
            MAX_INPUT_VALUE,
            &mut errors,
        );
        bounded(
            input,
            "max_length",
            &input_path,
            1,
            MAX_INPUT_VALUE,
            &mut errors,
        );
        text(
            input,
            "value",
            &input_path,
            false,
            MAX_INPUT_VALUE as usize,
            &mut errors,
        );
        text(
            input,
            "placeholder",
            &input_path,
            false,
            MAX_INPUT_PLACEHOLDER,
            &mut errors,
        );
    }
    errors
}

/// An application command's `type` (default CHAT_INPUT), if valid.
pub(crate) fn command_type(command: &Value) -> Option<u64> {
    match command.get("type") {
        None | Some(Value::Null) => Some(command_kind::CHAT_INPUT),
        Some(value) => value
            .as_u64()
            .or_else(|| value.as_str().and_then(|text| text.trim().parse().ok()))
            .filter(|kind| command_kind::ALL.contains(kind)),
    }
}

/// One application command as created (`POST`) or in a bulk overwrite
/// (`PUT`, with `base` its index).
pub(crate) fn command(command: &Value, base: &[String]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if !command.is_object() {
        errors.push(form::not_a_dict(base));
        return errors;
    }
    let kind = command_type(command).unwrap_or_else(|| {
        errors.push(form::choices(&at(base, "type"), &command_kind::ALL));
        command_kind::CHAT_INPUT
    });
    let chat_input = kind == command_kind::CHAT_INPUT;
    let strict = chat_input || kind == command_kind::PRIMARY_ENTRY_POINT;
    command_name(command, base, strict, &mut errors);
    if chat_input {
        description(command, base, &mut errors);
        options(command, base, &mut errors);
    }
    errors
}

/// A character of CHAT_INPUT names: `[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]`
/// (letters and numbers approximated by Rust's `is_alphabetic` and
/// `is_numeric`).
fn name_char(c: char) -> bool {
    matches!(c, '-' | '_' | '\'')
        || c.is_alphabetic()
        || c.is_numeric()
        || ('\u{0900}'..='\u{097F}').contains(&c)
        || ('\u{A8E0}'..='\u{A8FF}').contains(&c)
        || ('\u{0E00}'..='\u{0E7F}').contains(&c)
}

/// Whether a character has a lowercase variant other than itself.
fn has_lowercase_variant(c: char) -> bool {
    let mut lower = c.to_lowercase();
    !(lower.next() == Some(c) && lower.next().is_none())
}

/// The `name` of a command or option; `strict`: CHAT_INPUT rules (the
/// naming regex, lower case).
fn command_name(object: &Value, base: &[String], strict: bool, errors: &mut Vec<FieldError>) {
    let path = at(base, "name");
    let name = match object.get("name") {
        None | Some(Value::Null) => {
            errors.push(form::required(&path));
            return;
        }
        Some(Value::String(name)) => name.clone(),
        Some(other) => other.to_string(),
    };
    let length = char_len(&name);
    if length == 0 || length > MAX_COMMAND_NAME {
        errors.push(form::bad_length(&path, 1, MAX_COMMAND_NAME));
        return;
    }
    if !strict {
        return;
    }
    if !name.chars().all(name_char) {
        errors.push(form::regex(&path));
    }
    if name.chars().any(has_lowercase_variant) {
        errors.push(form::invalid_command_name(&path));
    }
}

/// A required description of 1–100 characters.
fn description(object: &Value, base: &[String], errors: &mut Vec<FieldError>) {
    let path = at(base, "description");
    match object.get("description") {
        None | Some(Value::Null) => errors.push(form::required(&path)),
        Some(value) => {
            let text = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            let length = char_len(&text);
            if length == 0 || length > MAX_COMMAND_DESCRIPTION {
                errors.push(form::bad_length(&path, 1, MAX_COMMAND_DESCRIPTION));
            }
        }
    }
}

/// The `options` of a CHAT_INPUT command or of a sub-command (group).
fn options(object: &Value, base: &[String], errors: &mut Vec<FieldError>) {
    let path = at(base, "options");
    let list = match object.get("options") {
        None | Some(Value::Null) => return,
        Some(Value::Array(list)) => list,
        Some(_) => {
            errors.push(form::not_a_list(&path));
            return;
        }
    };
    if list.len() > MAX_COMMAND_OPTIONS {
        errors.push(form::max_length(&path, MAX_COMMAND_OPTIONS));
        return;
    }
    for (o, option) in list.iter().enumerate() {
        let option_path = at(&path, o);
        if !option.is_object() {
            errors.push(form::not_a_dict(&option_path));
            continue;
        }
        let kind = match option.get("type") {
            None | Some(Value::Null) => {
                errors.push(form::required(&at(&option_path, "type")));
                None
            }
            Some(value) => {
                let kind = value.as_u64().filter(|kind| OPTION_TYPES.contains(kind));
                if kind.is_none() {
                    errors.push(form::choices(&at(&option_path, "type"), &OPTION_TYPES));
                }
                kind
            }
        };
        command_name(option, &option_path, true, errors);
        description(option, &option_path, errors);
        if let Some(choices) = option.get("choices").and_then(Value::as_array)
            && choices.len() > MAX_COMMAND_OPTIONS
        {
            errors.push(form::max_length(
                &at(&option_path, "choices"),
                MAX_COMMAND_OPTIONS,
            ));
        }
        if matches!(kind, Some(1 | 2)) {
            options(option, &option_path, errors);
        }
    }
}

/// Every component (rows flattened) of a component list.
pub(crate) fn flatten(components: &[Value]) -> Vec<&Value> {
    components
        .iter()
        .flat_map(|row| {
            row.get("components")
                .and_then(Value::as_array)
                .map(|children| children.iter().collect::<Vec<_>>())
                .unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn codes(errors: &[FieldError]) -> Vec<(String, &'static str)> {
        errors
            .iter()
            .map(|error| (error.path.join("."), error.code))
            .collect()
    }

    fn button(id: &str) -> Value {
        json!({"type": 2, "style": 1, "label": "x", "custom_id": id})
    }

    #[test]
    fn message_rules() {
        assert!(message(&json!({"content": "hi"}), &[]).is_empty());
        assert_eq!(
            codes(&message(&json!({"content": "x".repeat(2001)}), &[])),
            [("content".to_owned(), "BASE_TYPE_MAX_LENGTH")]
        );
        let rows: Vec<Value> = (0..6)
            .map(|i| json!({"type": 1, "components": [button(&i.to_string())]}))
            .collect();
        assert_eq!(
            codes(&message(&json!({"components": rows}), &[])),
            [("components".to_owned(), "BASE_TYPE_MAX_LENGTH")]
        );
        let six: Vec<Value> = (0..6).map(|i| button(&i.to_string())).collect();
        assert_eq!(
            codes(&message(
                &json!({"components": [{"type": 1, "components": six}]}),
                &[]
            )),
            [("components.0.components".to_owned(), "BASE_TYPE_BAD_LENGTH")]
        );
        let dup = json!({"components": [
            {"type": 1, "components": [button("a")]},
            {"type": 1, "components": [button("b"), button("a")]},
        ]});
        assert_eq!(
            codes(&message(&dup, &["data".to_owned()])),
            [(
                "data.components.1.components.1.custom_id".to_owned(),
                "COMPONENT_CUSTOM_ID_DUPLICATED"
            )]
        );
        let select =
            json!({"type": 3, "custom_id": "s", "options": [{"label": "A", "value": "a"}]});
        let mixed = json!({"components": [{"type": 1, "components": [select, button("b")]}]});
        assert_eq!(
            codes(&message(&mixed, &[])),
            [(
                "components.0.components.1".to_owned(),
                "COMPONENT_LAYOUT_WIDTH_EXCEEDED"
            )]
        );
        let long_label = json!({"components": [{"type": 1, "components": [
            {"type": 2, "style": 2, "label": "l".repeat(81), "custom_id": ""}
        ]}]});
        assert_eq!(
            codes(&message(&long_label, &[])),
            [
                (
                    "components.0.components.0.label".to_owned(),
                    "BASE_TYPE_MAX_LENGTH"
                ),
                (
                    "components.0.components.0.custom_id".to_owned(),
                    "BUTTON_COMPONENT_CUSTOM_ID_REQUIRED"
                ),
            ]
        );
    }

    #[test]
    fn select_rules() {
        let options: Vec<Value> = (0..26)
            .map(|i| json!({"label": i.to_string(), "value": i.to_string()}))
            .collect();
        let too_many = json!({"components": [{"type": 1, "components": [
            {"type": 3, "custom_id": "s", "options": options}
        ]}]});
        assert_eq!(
            codes(&message(&too_many, &[])),
            [(
                "components.0.components.0.options".to_owned(),
                "BASE_TYPE_BAD_LENGTH"
            )]
        );
        let over = json!({"components": [{"type": 1, "components": [
            {"type": 3, "custom_id": "s", "max_values": 3, "options": [
                {"label": "A", "value": "a"}, {"label": "B", "value": "a"}
            ]}
        ]}]});
        assert_eq!(
            codes(&message(&over, &[])),
            [
                (
                    "components.0.components.0.options.1".to_owned(),
                    "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED"
                ),
                (
                    "components.0.components.0.options".to_owned(),
                    "BASE_TYPE_MIN_LENGTH"
                ),
            ]
        );
        let bad_bounds = json!({"components": [{"type": 1, "components": [
            {"type": 3, "custom_id": "s", "min_values": 2, "max_values": 1,
             "options": [{"label": "A", "value": "a"}, {"label": "B", "value": "b"}]}
        ]}]});
        assert_eq!(
            codes(&message(&bad_bounds, &[])),
            [(
                "components.0.components.0.min_values".to_owned(),
                "NUMBER_TYPE_MAX"
            )]
        );
    }

    #[test]
    fn command_rules() {
        let named = |name: &str| json!({"name": name, "description": "d"});
        for good in [
            "ask",
            "ask-me_now",
            "don't",
            "日本語",
            "ç",
            "नमस्ते",
            "สวัสดี",
            "v2",
        ] {
            assert!(command(&named(good), &[]).is_empty(), "{good}");
        }
        assert_eq!(
            codes(&command(&named("Ask"), &["0".to_owned()])),
            [("0.name".to_owned(), "APPLICATION_COMMAND_INVALID_NAME")]
        );
        assert_eq!(
            codes(&command(&named("É"), &[])),
            [("name".to_owned(), "APPLICATION_COMMAND_INVALID_NAME")]
        );
        assert_eq!(
            codes(&command(&named("Two Words"), &[])),
            [
                ("name".to_owned(), "STRING_TYPE_REGEX"),
                ("name".to_owned(), "APPLICATION_COMMAND_INVALID_NAME"),
            ]
        );
        assert_eq!(
            codes(&command(&named("/ask"), &[])),
            [("name".to_owned(), "STRING_TYPE_REGEX")]
        );
        // User and message commands: any case, spaces, no description.
        assert!(command(&json!({"name": "Ask Alice", "type": 2}), &[]).is_empty());
        assert!(command(&json!({"name": "Quote it", "type": 3}), &[]).is_empty());
        let options = json!({"name": "ask", "description": "d", "options": [
            {"type": 3, "name": "Question", "description": "q"},
            {"type": 12, "name": "when", "description": ""},
            {"type": 1, "name": "sub", "description": "s", "options": [
                {"type": 3, "name": "x"}
            ]},
        ]});
        assert_eq!(
            codes(&command(&options, &[])),
            [
                (
                    "options.0.name".to_owned(),
                    "APPLICATION_COMMAND_INVALID_NAME"
                ),
                ("options.1.type".to_owned(), "BASE_TYPE_CHOICES"),
                ("options.1.description".to_owned(), "BASE_TYPE_BAD_LENGTH"),
                (
                    "options.2.options.0.description".to_owned(),
                    "BASE_TYPE_REQUIRED"
                ),
            ]
        );
    }

    #[test]
    fn modal_rules() {
        let input = |id: &str| {
            json!({"type": 1, "components": [
                {"type": 4, "custom_id": id, "style": 1, "label": "Why?"}
            ]})
        };
        let good = json!({"custom_id": "m", "title": "Tell me", "components": [input("a")]});
        assert!(modal(&good, &["data".to_owned()]).is_empty());
        let bad = json!({"custom_id": "m", "title": "t".repeat(46), "components": []});
        assert_eq!(
            codes(&modal(&bad, &["data".to_owned()])),
            [
                ("data.title".to_owned(), "BASE_TYPE_MAX_LENGTH"),
                ("data.components".to_owned(), "BASE_TYPE_BAD_LENGTH"),
            ]
        );
        let rows: Vec<Value> = (0..6).map(|i| input(&i.to_string())).collect();
        let six = json!({"custom_id": "m", "title": "x", "components": rows});
        assert_eq!(
            codes(&modal(&six, &[])),
            [("components".to_owned(), "BASE_TYPE_BAD_LENGTH")]
        );
        let long = json!({"custom_id": "m", "title": "x", "components": [{"type": 1, "components": [
            {"type": 4, "custom_id": "a", "style": 3, "label": "l".repeat(46)}
        ]}]});
        assert_eq!(
            codes(&modal(&long, &[])),
            [
                (
                    "components.0.components.0.style".to_owned(),
                    "BASE_TYPE_CHOICES"
                ),
                (
                    "components.0.components.0.label".to_owned(),
                    "BASE_TYPE_MAX_LENGTH"
                ),
            ]
        );
    }
}

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

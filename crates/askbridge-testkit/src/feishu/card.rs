//! Card JSON 2.0: the checks Feishu makes when a card is sent, replied,
//! patched or returned by a callback, for the elements the fake knows, and
//! finding a card's elements for users' actions.
//!
//! Accepted element tags: `markdown`, `div`, `hr`, `column_set` (its
//! `columns[].elements`), `button`, `form`, `input`, `select_static`,
//! `multi_select_static` and `checker`; anything else is refused, naming
//! its path (`body.elements[2].tag`).

use std::collections::HashSet;

use serde_json::Value;

use super::util::str_field;

/// Button `type`s of card JSON 2.0.
const BUTTON_TYPES: &[&str] = &[
    "default",
    "primary",
    "danger",
    "text",
    "laser",
    "primary_filled",
    "primary_text",
    "danger_filled",
    "danger_text",
];

/// Tags of elements that take part in forms (and so need a `name`).
const FORM_FIELDS: &[&str] = &["input", "select_static", "multi_select_static", "checker"];

/// The most characters an `input` may allow.
const MAX_INPUT_LENGTH: u64 = 1000;

/// Checks a card; `Err` names the first problem and its path.
pub(crate) fn validate(card: &Value) -> Result<(), String> {
    let Value::Object(object) = card else {
        return Err("card: must be a JSON object".into());
    };
    if object.get("schema").and_then(Value::as_str) != Some("2.0") {
        return Err("schema: must be \"2.0\" (card JSON 2.0)".into());
    }
    if let Some(config) = object.get("config") {
        if !config.is_object() {
            return Err("config: must be an object".into());
        }
        if config
            .get("update_multi")
            .is_some_and(|multi| multi != &Value::Bool(true))
        {
            return Err("config.update_multi: card JSON 2.0 only supports true".into());
        }
    }
    if let Some(header) = object.get("header") {
        if !header.is_object() {
            return Err("header: must be an object".into());
        }
        if let Some(title) = header.get("title") {
            text_object(title, "header.title")?;
        }
    }
    let Some(body) = object.get("body") else {
        return Err("body: missing".into());
    };
    let Some(elements) = body.get("elements") else {
        return Err("body.elements: missing".into());
    };
    let mut checker = Checker::default();
    checker.elements(elements, "body.elements", false)?;
    Ok(())
}

/// A `{"tag": "plain_text" | "lark_md", "content": "…"}` text object.
fn text_object(text: &Value, path: &str) -> Result<(), String> {
    if !text.is_object() {
        return Err(format!("{path}: must be a text object"));
    }
    if str_field(text, "content").is_none() {
        return Err(format!("{path}.content: must be a string"));
    }
    match str_field(text, "tag") {
        None | Some("plain_text" | "lark_md") => Ok(()),
        Some(other) => Err(format!(
            "{path}.tag: \"{other}\" is not plain_text or lark_md"
        )),
    }
}

#[derive(Debug, Default)]
struct Checker {
    names: HashSet<String>,
    /// Whether the form being checked has a submit button yet.
    submit_found: bool,
}

impl Checker {
    fn elements(&mut self, elements: &Value, path: &str, in_form: bool) -> Result<(), String> {
        let Value::Array(list) = elements else {
            return Err(format!("{path}: must be an array"));
        };
        for (index, element) in list.iter().enumerate() {
            self.element(element, &format!("{path}[{index}]"), in_form)?;
        }
        Ok(())
    }

    fn name(&mut self, element: &Value, path: &str, required: bool) -> Result<(), String> {
        match element.get("name") {
            None if required => Err(format!("{path}.name: required")),
            None => Ok(()),
            Some(Value::String(name)) if name.is_empty() => {
                Err(format!("{path}.name: must not be empty"))
            }
            Some(Value::String(name)) => {
                if self.names.insert(name.clone()) {
                    Ok(())
                } else {
                    Err(format!("{path}.name: \"{name}\" is used twice in the card"))
                }
            }
            Some(_) => Err(format!("{path}.name: must be a string")),
        }
    }

    fn element(&mut self, element: &Value, path: &str, in_form: bool) -> Result<(), String> {
        if !element.is_object() {
            return Err(format!("{path}: must be an object"));
        }
        let Some(tag) = str_field(element, "tag") else {
            return Err(format!("{path}.tag: missing"));
        };
        match tag {
            "markdown" => {
                if str_field(element, "content").is_none() {
                    return Err(format!("{path}.content: must be a string"));
                }
            }
            "div" => {
                if let Some(text) = element.get("text") {
                    text_object(text, &format!("{path}.text"))?;
                }
            }
            "hr" => {}
            "column_set" => {
                let Some(Value::Array(columns)) = element.get("columns") else {
                    return Err(format!("{path}.columns: must be an array"));
                };
                for (index, column) in columns.iter().enumerate() {
                    let column_path = format!("{path}.columns[{index}]");
                    if str_field(column, "tag") != Some("column") {
                        return Err(format!("{column_path}.tag: must be \"column\""));
                    }
                    let elements = column.get("elements").unwrap_or(&Value::Null);
                    self.elements(elements, &format!("{column_path}.elements"), in_form)?;
                }
            }
            "button" => self.button(element, path, in_form)?,
            "form" => {
                if in_form {
                    return Err(format!("{path}: forms cannot be nested"));
                }
                self.name(element, path, true)?;
                let outer = std::mem::replace(&mut self.submit_found, false);
                let elements = element.get("elements").unwrap_or(&Value::Null);
                self.elements(elements, &format!("{path}.elements"), true)?;
                if !self.submit_found {
                    return Err(format!(
                        "{path}: a form needs a button with form_action_type \"submit\""
                    ));
                }
                self.submit_found = outer;
            }
            "input" => {
                self.name(element, path, true)?;
                if !in_form && !element.get("behaviors").is_some_and(Value::is_array) {
                    return Err(format!("{path}: an input outside a form needs behaviors"));
                }
                if let Some(max) = element.get("max_length") {
                    match max.as_u64() {
                        Some(1..=MAX_INPUT_LENGTH) => {}
                        _ => {
                            return Err(format!(
                                "{path}.max_length: must be 1 to {MAX_INPUT_LENGTH}"
                            ));
                        }
                    }
                }
                for key in ["placeholder", "label"] {
                    if let Some(text) = element.get(key) {
                        text_object(text, &format!("{path}.{key}"))?;
                    }
                }
                behaviors(element, path)?;
            }
            "select_static" | "multi_select_static" => {
                self.name(element, path, true)?;
                options(element, path)?;
                if let Some(text) = element.get("placeholder") {
                    text_object(text, &format!("{path}.placeholder"))?;
                }
                behaviors(element, path)?;
            }
            "checker" => {
                self.name(element, path, true)?;
                if let Some(text) = element.get("text") {
                    text_object(text, &format!("{path}.text"))?;
                }
                behaviors(element, path)?;
            }
            other => {
                return Err(format!(
                    "{path}.tag: \"{other}\" is not an element the fake accepts"
                ));
            }
        }
        Ok(())
    }

    fn button(&mut self, element: &Value, path: &str, in_form: bool) -> Result<(), String> {
        let content = element
            .get("text")
            .and_then(|text| str_field(text, "content"));
        match content {
            Some(content) if !content.trim().is_empty() => {}
            _ => return Err(format!("{path}.text.content: must be a non-empty string")),
        }
        if let Some(kind) = element.get("type") {
            let known = kind
                .as_str()
                .is_some_and(|kind| BUTTON_TYPES.contains(&kind));
            if !known {
                return Err(format!(
                    "{path}.type: {kind} is not one of {}",
                    BUTTON_TYPES.join(", ")
                ));
            }
        }
        match element.get("form_action_type") {
            None => {}
            Some(_) if !in_form => {
                return Err(format!(
                    "{path}.form_action_type: only buttons in a form have one"
                ));
            }
            Some(Value::String(action)) if action == "submit" => self.submit_found = true,
            Some(Value::String(action)) if action == "reset" => {}
            Some(other) => {
                return Err(format!(
                    "{path}.form_action_type: {other} is not submit or reset"
                ));
            }
        }
        self.name(element, path, in_form)?;
        behaviors(element, path)
    }
}

/// `behaviors`: an array of `{"type": "callback", "value": …}` (an object
/// or a string) or `{"type": "open_url", …}`.
fn behaviors(element: &Value, path: &str) -> Result<(), String> {
    let Some(behaviors) = element.get("behaviors") else {
        return Ok(());
    };
    let Value::Array(list) = behaviors else {
        return Err(format!("{path}.behaviors: must be an array"));
    };
    for (index, behavior) in list.iter().enumerate() {
        let behavior_path = format!("{path}.behaviors[{index}]");
        match str_field(behavior, "type") {
            Some("callback") => match behavior.get("value") {
                Some(Value::Object(_) | Value::String(_)) => {}
                _ => {
                    return Err(format!(
                        "{behavior_path}.value: a callback needs an object (or string) value"
                    ));
                }
            },
            Some("open_url") => {}
            _ => {
                return Err(format!(
                    "{behavior_path}.type: must be \"callback\" or \"open_url\""
                ));
            }
        }
    }
    Ok(())
}

/// A select's `options`: non-empty, each `{"text": {"tag": "plain_text",
/// "content": …}, "value": …}`, values unique.
fn options(element: &Value, path: &str) -> Result<(), String> {
    let list = match element.get("options") {
        Some(Value::Array(list)) if !list.is_empty() => list,
        _ => return Err(format!("{path}.options: must be a non-empty array")),
    };
    let mut values = HashSet::new();
    for (index, option) in list.iter().enumerate() {
        let option_path = format!("{path}.options[{index}]");
        let text = option.get("text").unwrap_or(&Value::Null);
        if str_field(text, "tag") != Some("plain_text") || str_field(text, "content").is_none() {
            return Err(format!(
                "{option_path}.text: must be {{\"tag\": \"plain_text\", \"content\": …}}"
            ));
        }
        let Some(value) = str_field(option, "value") else {
            return Err(format!("{option_path}.value: must be a string"));
        };
        if !values.insert(value) {
            return Err(format!("{option_path}.value: \"{value}\" is used twice"));
        }
    }
    Ok(())
}

/// One element of a card, with where it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Found<'a> {
    /// The element.
    pub(crate) element: &'a Value,
    /// The form it is in, if any.
    pub(crate) form: Option<&'a Value>,
}

impl<'a> Found<'a> {
    /// Its `tag`.
    pub(crate) fn tag(&self) -> &'a str {
        str_field(self.element, "tag").unwrap_or_default()
    }

    /// Its `name`.
    pub(crate) fn name(&self) -> Option<&'a str> {
        str_field(self.element, "name")
    }

    /// A button's visible text.
    pub(crate) fn text(&self) -> Option<&'a str> {
        self.element
            .get("text")
            .and_then(|text| str_field(text, "content"))
    }

    /// The `value` of its first `callback` behavior.
    pub(crate) fn callback_value(&self) -> Option<&'a Value> {
        self.element
            .get("behaviors")?
            .as_array()?
            .iter()
            .find(|behavior| str_field(behavior, "type") == Some("callback"))?
            .get("value")
    }

    /// Whether it is `disabled`.
    pub(crate) fn disabled(&self) -> bool {
        self.element.get("disabled") == Some(&Value::Bool(true))
    }

    /// A select's option values.
    pub(crate) fn option_values(&self) -> Vec<&'a str> {
        self.element
            .get("options")
            .and_then(Value::as_array)
            .map(|options| {
                options
                    .iter()
                    .filter_map(|option| str_field(option, "value"))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Every element of `card`, depth first.
pub(crate) fn elements(card: &Value) -> Vec<Found<'_>> {
    let mut found = Vec::new();
    if let Some(elements) = card.get("body").and_then(|body| body.get("elements")) {
        collect(elements, None, &mut found);
    }
    found
}

fn collect<'a>(elements: &'a Value, form: Option<&'a Value>, found: &mut Vec<Found<'a>>) {
    let Some(list) = elements.as_array() else {
        return;
    };
    for element in list {
        found.push(Found { element, form });
        match str_field(element, "tag") {
            Some("form") => {
                if let Some(inner) = element.get("elements") {
                    collect(inner, Some(element), found);
                }
            }
            Some("column_set") => {
                for column in element
                    .get("columns")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(inner) = column.get("elements") {
                        collect(inner, form, found);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The fields (inputs, selects, checkers) of `form`.
pub(crate) fn form_fields(form: &Value) -> Vec<Found<'_>> {
    let mut found = Vec::new();
    if let Some(inner) = form.get("elements") {
        collect(inner, Some(form), &mut found);
    }
    found.retain(|field| FORM_FIELDS.contains(&field.tag()));
    found
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn card(elements: Value) -> Value {
        json!({"schema": "2.0", "body": {"elements": elements}})
    }

    fn button(name: &str) -> Value {
        json!({"tag": "button", "name": name, "text": {"tag": "plain_text", "content": name},
               "type": "primary", "behaviors": [{"type": "callback", "value": {"n": name}}]})
    }

    fn submit(name: &str) -> Value {
        json!({"tag": "button", "name": name, "text": {"tag": "plain_text", "content": "Send"},
               "form_action_type": "submit"})
    }

    #[test]
    fn accepts_the_known_elements() {
        let ok = card(json!([
            {"tag": "markdown", "content": "**Deploy?**"},
            {"tag": "hr"},
            {"tag": "div", "text": {"tag": "plain_text", "content": "x"}},
            {"tag": "column_set", "columns": [{"tag": "column", "elements": [button("yes"), button("no")]}]},
            {"tag": "select_static", "name": "pick", "options": [
                {"text": {"tag": "plain_text", "content": "A"}, "value": "a"}]},
            {"tag": "form", "name": "f", "elements": [
                {"tag": "input", "name": "why", "max_length": 1000},
                {"tag": "multi_select_static", "name": "many", "options": [
                    {"text": {"tag": "plain_text", "content": "A"}, "value": "a"},
                    {"text": {"tag": "plain_text", "content": "B"}, "value": "b"}]},
                {"tag": "checker", "name": "sure"},
                submit("send"),
            ]},
        ]));
        assert_eq!(validate(&ok), Ok(()));
        let all = elements(&ok);
        assert!(all.iter().any(|found| found.name() == Some("no")));
        let form = all
            .iter()
            .find(|found| found.name() == Some("send"))
            .and_then(|found| found.form)
            .expect("the submit button is in the form");
        let fields: Vec<_> = form_fields(form).iter().filter_map(Found::name).collect();
        assert_eq!(fields, ["why", "many", "sure"]);
    }

    #[test]
    fn refusals_name_the_path() {
        let cases = [
            (json!({"schema": "1.0", "body": {"elements": []}}), "schema"),
            (
                json!({"schema": "2.0", "body": {}}),
                "body.elements: missing",
            ),
            (
                card(json!([{"tag": "hr"}, {"tag": "img"}])),
                "body.elements[1].tag",
            ),
            (
                card(json!([button("a"), button("a")])),
                "body.elements[1].name",
            ),
            (
                card(json!([{"tag": "button", "text": {"content": ""}}])),
                "body.elements[0].text.content",
            ),
            (
                card(json!([{"tag": "button", "text": {"content": "x"}, "type": "big"}])),
                "body.elements[0].type",
            ),
            (
                card(
                    json!([{"tag": "form", "name": "f", "elements": [{"tag": "input", "name": "i"}]}]),
                ),
                "form_action_type \"submit\"",
            ),
            (
                card(json!([{"tag": "form", "name": "f", "elements": [
                    {"tag": "form", "name": "g", "elements": [submit("s")]}]}])),
                "body.elements[0].elements[0]: forms cannot be nested",
            ),
            (
                card(json!([{"tag": "input", "name": "i"}])),
                "outside a form needs behaviors",
            ),
            (
                card(json!([{"tag": "form", "name": "f", "elements": [
                    {"tag": "input", "name": "i", "max_length": 1001}, submit("s")]}])),
                "max_length",
            ),
            (
                card(json!([{"tag": "select_static", "name": "s", "options": []}])),
                "options: must be a non-empty array",
            ),
            (
                card(json!([{"tag": "select_static", "name": "s", "options": [
                    {"text": {"tag": "plain_text", "content": "A"}, "value": "a"},
                    {"text": {"tag": "plain_text", "content": "B"}, "value": "a"}]}])),
                "options[1].value",
            ),
            (
                card(json!([{"tag": "button", "text": {"content": "x"},
                             "behaviors": [{"type": "callback"}]}])),
                "behaviors[0].value",
            ),
            (
                card(
                    json!([{"tag": "button", "text": {"content": "x"}, "form_action_type": "submit"}]),
                ),
                "only buttons in a form",
            ),
        ];
        for (card, expected) in cases {
            let error = validate(&card).expect_err("refused");
            assert!(
                error.contains(expected),
                "{error:?} should mention {expected:?}"
            );
        }
    }
}

//! Block Kit checks, with the limits of Slack's reference ("Blocks",
//! "Block elements", "Composition objects"). A message that breaks one is
//! refused with `invalid_blocks`; the `errors` list names each problem with
//! a JSON pointer, the way Slack's answers do
//! (`"must be less than 3001 characters [json-pointer:/blocks/0/text/text]"`).

use std::collections::HashSet;

use serde_json::Value;

use super::util::{char_len, str_field};

/// Blocks in a message.
pub(crate) const MAX_MESSAGE_BLOCKS: usize = 50;
/// Blocks in a modal or Home tab.
pub(crate) const MAX_VIEW_BLOCKS: usize = 100;
/// `text` of a section.
pub(crate) const MAX_SECTION_TEXT: usize = 3000;
/// Fields of a section.
pub(crate) const MAX_SECTION_FIELDS: usize = 10;
/// Each field of a section.
pub(crate) const MAX_SECTION_FIELD_TEXT: usize = 2000;
/// `text` of a header.
pub(crate) const MAX_HEADER_TEXT: usize = 150;
/// Button `text`.
pub(crate) const MAX_BUTTON_TEXT: usize = 75;
/// Button `value`.
pub(crate) const MAX_BUTTON_VALUE: usize = 2000;
/// `action_id` and `block_id`.
pub(crate) const MAX_ID: usize = 255;
/// Elements of an actions block.
pub(crate) const MAX_ACTIONS_ELEMENTS: usize = 25;
/// Elements of a context block.
pub(crate) const MAX_CONTEXT_ELEMENTS: usize = 10;
/// Options of a select menu.
pub(crate) const MAX_SELECT_OPTIONS: usize = 100;
/// Options of checkboxes and radio buttons.
pub(crate) const MAX_CHOICE_OPTIONS: usize = 10;
/// Option `text`.
pub(crate) const MAX_OPTION_TEXT: usize = 75;
/// Option `value`.
pub(crate) const MAX_OPTION_VALUE: usize = 150;
/// Placeholder text.
pub(crate) const MAX_PLACEHOLDER: usize = 150;
/// Input block label.
pub(crate) const MAX_INPUT_LABEL: usize = 2000;
/// Modal title, submit and close texts.
pub(crate) const MAX_VIEW_TITLE: usize = 24;

const BLOCK_TYPES: &[&str] = &[
    "section",
    "divider",
    "header",
    "actions",
    "context",
    "image",
    "input",
    "rich_text",
    "file",
    "video",
    "markdown",
    "table",
    "card",
    "carousel",
    "alert",
    "context_actions",
    "task_card",
    "plan",
    "data_table",
    "container",
];

const INTERACTIVE: &[&str] = &[
    "button",
    "static_select",
    "multi_static_select",
    "external_select",
    "multi_external_select",
    "users_select",
    "multi_users_select",
    "conversations_select",
    "multi_conversations_select",
    "channels_select",
    "multi_channels_select",
    "checkboxes",
    "radio_buttons",
    "overflow",
    "datepicker",
    "timepicker",
    "datetimepicker",
    "plain_text_input",
    "email_text_input",
    "url_text_input",
    "number_input",
    "rich_text_input",
];

struct Checker {
    errors: Vec<String>,
    /// The `action_id`s of the block being checked.
    action_ids: HashSet<String>,
    block_ids: HashSet<String>,
}

impl Checker {
    fn error(&mut self, message: &str, pointer: &str) {
        self.errors
            .push(format!("{message} [json-pointer:{pointer}]"));
    }

    fn too_long(&mut self, max: usize, pointer: &str) {
        self.error(
            &format!("must be less than {} characters", max + 1),
            pointer,
        );
    }

    fn too_many(&mut self, max: usize, pointer: &str) {
        self.error(&format!("must provide no more than {max} items"), pointer);
    }

    /// A text object (`{"type": "plain_text"|"mrkdwn", "text": …}`) of at
    /// most `max` characters.
    fn text(&mut self, text: Option<&Value>, max: usize, pointer: &str, plain_only: bool) {
        let Some(text) = text else {
            return;
        };
        let kind = str_field(text, "type");
        let allowed = if plain_only {
            kind == Some("plain_text")
        } else {
            matches!(kind, Some("plain_text" | "mrkdwn"))
        };
        if !allowed {
            self.error("must be a valid enum value", &format!("{pointer}/type"));
        }
        match str_field(text, "text") {
            Some(content) if char_len(content) > max => {
                self.too_long(max, &format!("{pointer}/text"));
            }
            Some("") => {
                self.error("must be more than 0 characters", &format!("{pointer}/text"));
            }
            Some(_) => {}
            None => self.error("missing required field: text", pointer),
        }
    }

    fn id(&mut self, value: Option<&str>, pointer: &str, block: bool) {
        let Some(id) = value else {
            return;
        };
        if char_len(id) > MAX_ID {
            self.too_long(MAX_ID, pointer);
        }
        let seen = if block {
            &mut self.block_ids
        } else {
            &mut self.action_ids
        };
        if !seen.insert(id.to_owned()) {
            let what = if block { "block_id" } else { "action_id" };
            self.error(&format!("duplicate {what} '{id}'"), pointer);
        }
    }

    fn options(&mut self, options: Option<&Value>, max: usize, pointer: &str) {
        let Some(options) = options else {
            return;
        };
        let Some(list) = options.as_array() else {
            self.error("must be an array", pointer);
            return;
        };
        if list.len() > max {
            self.too_many(max, pointer);
        }
        for (index, option) in list.iter().enumerate() {
            let at = format!("{pointer}/{index}");
            self.text(
                option.get("text"),
                MAX_OPTION_TEXT,
                &format!("{at}/text"),
                false,
            );
            match str_field(option, "value") {
                Some(value) if char_len(value) > MAX_OPTION_VALUE => {
                    self.too_long(MAX_OPTION_VALUE, &format!("{at}/value"));
                }
                Some(_) => {}
                None => self.error("missing required field: value", &at),
            }
        }
    }

    fn element(&mut self, element: &Value, pointer: &str) {
        let kind = str_field(element, "type").unwrap_or_default();
        if INTERACTIVE.contains(&kind) {
            self.id(
                str_field(element, "action_id"),
                &format!("{pointer}/action_id"),
                false,
            );
        }
        match kind {
            "button" => {
                self.text(
                    element.get("text"),
                    MAX_BUTTON_TEXT,
                    &format!("{pointer}/text"),
                    true,
                );
                if let Some(value) = str_field(element, "value")
                    && char_len(value) > MAX_BUTTON_VALUE
                {
                    self.too_long(MAX_BUTTON_VALUE, &format!("{pointer}/value"));
                }
                if let Some(style) = str_field(element, "style")
                    && !matches!(style, "primary" | "danger")
                {
                    self.error("must be a valid enum value", &format!("{pointer}/style"));
                }
            }
            "static_select" | "multi_static_select" | "overflow" => {
                let max = if kind == "overflow" {
                    5
                } else {
                    MAX_SELECT_OPTIONS
                };
                if element.get("options").is_none() && element.get("option_groups").is_none() {
                    self.error("missing required field: options", pointer);
                }
                self.options(element.get("options"), max, &format!("{pointer}/options"));
                self.text(
                    element.get("placeholder"),
                    MAX_PLACEHOLDER,
                    &format!("{pointer}/placeholder"),
                    true,
                );
            }
            "checkboxes" | "radio_buttons" => {
                if element.get("options").is_none() {
                    self.error("missing required field: options", pointer);
                }
                self.options(
                    element.get("options"),
                    MAX_CHOICE_OPTIONS,
                    &format!("{pointer}/options"),
                );
            }
            "" => self.error("missing required field: type", pointer),
            _ => {}
        }
    }

    fn block(&mut self, block: &Value, pointer: &str) {
        // Slack wants an `action_id` unique within its block only.
        self.action_ids.clear();
        let kind = str_field(block, "type").unwrap_or_default();
        if !BLOCK_TYPES.contains(&kind) {
            self.error(
                "failed to match all allowed schemas",
                &format!("{pointer}/type"),
            );
            return;
        }
        self.id(
            str_field(block, "block_id"),
            &format!("{pointer}/block_id"),
            true,
        );
        match kind {
            "section" => {
                self.text(
                    block.get("text"),
                    MAX_SECTION_TEXT,
                    &format!("{pointer}/text"),
                    false,
                );
                if let Some(fields) = block.get("fields").and_then(Value::as_array) {
                    if fields.len() > MAX_SECTION_FIELDS {
                        self.too_many(MAX_SECTION_FIELDS, &format!("{pointer}/fields"));
                    }
                    for (index, field) in fields.iter().enumerate() {
                        self.text(
                            Some(field),
                            MAX_SECTION_FIELD_TEXT,
                            &format!("{pointer}/fields/{index}"),
                            false,
                        );
                    }
                }
                if block.get("text").is_none() && block.get("fields").is_none() {
                    self.error("must provide text or fields", pointer);
                }
                if let Some(accessory) = block.get("accessory") {
                    self.element(accessory, &format!("{pointer}/accessory"));
                }
            }
            "header" => {
                self.text(
                    block.get("text"),
                    MAX_HEADER_TEXT,
                    &format!("{pointer}/text"),
                    true,
                );
            }
            "actions" => {
                let elements = block.get("elements").and_then(Value::as_array);
                let Some(elements) = elements else {
                    self.error("missing required field: elements", pointer);
                    return;
                };
                if elements.len() > MAX_ACTIONS_ELEMENTS {
                    self.too_many(MAX_ACTIONS_ELEMENTS, &format!("{pointer}/elements"));
                }
                for (index, element) in elements.iter().enumerate() {
                    self.element(element, &format!("{pointer}/elements/{index}"));
                }
            }
            "context" => {
                if let Some(elements) = block.get("elements").and_then(Value::as_array)
                    && elements.len() > MAX_CONTEXT_ELEMENTS
                {
                    self.too_many(MAX_CONTEXT_ELEMENTS, &format!("{pointer}/elements"));
                }
            }
            "input" => {
                self.text(
                    block.get("label"),
                    MAX_INPUT_LABEL,
                    &format!("{pointer}/label"),
                    true,
                );
                match block.get("element") {
                    Some(element) => self.element(element, &format!("{pointer}/element")),
                    None => self.error("missing required field: element", pointer),
                }
            }
            _ => {}
        }
    }
}

/// The problems of a `blocks` parameter (empty if it is valid), for a
/// message (`in_view` false, at most 50 blocks) or a view (100).
pub(crate) fn check_blocks(blocks: &Value, pointer: &str, in_view: bool) -> Vec<String> {
    let mut checker = Checker {
        errors: Vec::new(),
        action_ids: HashSet::new(),
        block_ids: HashSet::new(),
    };
    let Some(list) = blocks.as_array() else {
        checker.error("must be an array", pointer);
        return checker.errors;
    };
    let max = if in_view {
        MAX_VIEW_BLOCKS
    } else {
        MAX_MESSAGE_BLOCKS
    };
    if list.len() > max {
        checker.too_many(max, pointer);
    }
    for (index, block) in list.iter().enumerate() {
        checker.block(block, &format!("{pointer}/{index}"));
    }
    checker.errors
}

/// The problems of a modal view (title, submit, close, blocks).
pub(crate) fn check_view(view: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    if str_field(view, "type") != Some("modal") && str_field(view, "type") != Some("home") {
        errors.push("must be a valid enum value [json-pointer:/view/type]".to_owned());
    }
    let mut checker = Checker {
        errors: Vec::new(),
        action_ids: HashSet::new(),
        block_ids: HashSet::new(),
    };
    if str_field(view, "type") == Some("modal") {
        match view.get("title") {
            Some(title) => checker.text(Some(title), MAX_VIEW_TITLE, "/view/title", true),
            None => checker.error("missing required field: title", "/view"),
        }
        checker.text(view.get("submit"), MAX_VIEW_TITLE, "/view/submit", true);
        checker.text(view.get("close"), MAX_VIEW_TITLE, "/view/close", true);
    }
    errors.append(&mut checker.errors);
    match view.get("blocks") {
        Some(blocks) => errors.extend(check_blocks(blocks, "/view/blocks", true)),
        None => errors.push("missing required field: blocks [json-pointer:/view]".to_owned()),
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn button(action_id: &str, text: &str) -> Value {
        json!({"type": "button", "action_id": action_id, "text": {"type": "plain_text", "text": text}})
    }

    #[test]
    fn limits() {
        let ok = json!([
            {"type": "section", "text": {"type": "mrkdwn", "text": "Deploy?"}},
            {"type": "actions", "block_id": "b", "elements": [button("yes", "Yes"), button("no", "No")]},
        ]);
        assert!(check_blocks(&ok, "/blocks", false).is_empty());

        let long =
            json!([{"type": "section", "text": {"type": "mrkdwn", "text": "x".repeat(3001)}}]);
        assert_eq!(
            check_blocks(&long, "/blocks", false),
            ["must be less than 3001 characters [json-pointer:/blocks/0/text/text]"]
        );

        let many: Vec<Value> = (0..51).map(|_| json!({"type": "divider"})).collect();
        assert_eq!(check_blocks(&json!(many), "/blocks", false).len(), 1);
        assert!(check_blocks(&json!(many), "/blocks", true).is_empty());

        let duplicate =
            json!([{"type": "actions", "elements": [button("a", "A"), button("a", "B")]}]);
        assert!(check_blocks(&duplicate, "/blocks", false)[0].starts_with("duplicate action_id"));
        let apart = json!([
            {"type": "actions", "elements": [button("a", "A")]},
            {"type": "actions", "elements": [button("a", "B")]},
        ]);
        assert!(check_blocks(&apart, "/blocks", false).is_empty());

        let label = json!([{"type": "actions", "elements": [button("a", &"x".repeat(76))]}]);
        assert_eq!(check_blocks(&label, "/blocks", false).len(), 1);

        let options: Vec<Value> = (0..101)
            .map(|n| json!({"text": {"type": "plain_text", "text": format!("o{n}")}, "value": n.to_string()}))
            .collect();
        let select = json!([{"type": "actions", "elements": [{"type": "static_select", "action_id": "s", "options": options}]}]);
        assert_eq!(check_blocks(&select, "/blocks", false).len(), 1);

        let unknown = json!([{"type": "no_such_block"}]);
        assert_eq!(check_blocks(&unknown, "/blocks", false).len(), 1);
    }
}

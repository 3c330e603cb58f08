//! Request parameters: the Bot API takes them as a query string,
//! `application/x-www-form-urlencoded`, `application/json` or
//! `multipart/form-data` (teloxide sends JSON, and multipart for methods
//! that may upload a file, such as `setWebhook`). All end up as one JSON
//! object; form values are strings, JSON-looking ones (objects, arrays)
//! parsed, and the accessors here read numbers and booleans from either.

use serde_json::{Map, Value};

/// All parameters of a request as one JSON object. `content_type` is the
/// request's header as sent (the multipart boundary is case-sensitive).
pub(crate) fn parse(content_type: Option<&str>, query: Option<&str>, body: &[u8]) -> Value {
    let mut params = Map::new();
    if let Some(query) = query {
        for (key, value) in parse_urlencoded(query) {
            params.insert(key, form_value(value));
        }
    }
    let content_type = content_type.unwrap_or("");
    let media_type = content_type.to_ascii_lowercase();
    if media_type.starts_with("multipart/form-data") {
        if let Some(boundary) = boundary(content_type) {
            for (key, value) in parse_multipart(&boundary, body) {
                params.insert(key, value);
            }
        }
    } else if media_type.starts_with("application/x-www-form-urlencoded") {
        for (key, value) in parse_urlencoded(&String::from_utf8_lossy(body)) {
            params.insert(key, form_value(value));
        }
    } else if let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(body) {
        params.extend(object);
    }
    Value::Object(params)
}

fn boundary(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|part| {
        let (key, value) = part.trim().split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| value.trim().trim_matches('"').to_owned())
    })
}

fn parse_urlencoded(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(key), percent_decode(value))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    decode(text, true)
}

/// A URL path segment, `%XX` escapes decoded (`+` stays).
pub(crate) fn decode_path_segment(text: &str) -> String {
    decode(text, false)
}

fn decode(text: &str, plus_is_space: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|hex| u8::from_str_radix(hex, 16).ok()) {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A form field's value: JSON objects and arrays (e.g. `reply_markup`,
/// `allowed_updates`) parsed, everything else kept as a string.
fn form_value(text: String) -> Value {
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(value) = serde_json::from_str::<Value>(&text)
    {
        return value;
    }
    Value::String(text)
}

fn parse_multipart(boundary: &str, body: &[u8]) -> Vec<(String, Value)> {
    let delimiter = format!("--{boundary}");
    let delimiter = delimiter.as_bytes();
    let mut fields = Vec::new();
    let mut parts = split(body, delimiter).into_iter().skip(1);
    for part in parts.by_ref() {
        if part.starts_with(b"--") {
            break;
        }
        let part = part.strip_prefix(b"\r\n").unwrap_or(part);
        let part = part.strip_suffix(b"\r\n").unwrap_or(part);
        let Some(split_at) = find(part, b"\r\n\r\n") else {
            continue;
        };
        let headers = String::from_utf8_lossy(&part[..split_at]);
        let content = &part[split_at + 4..];
        let Some(disposition) = headers.lines().find(|line| {
            line.to_ascii_lowercase()
                .starts_with("content-disposition:")
        }) else {
            continue;
        };
        let Some(name) = disposition_param(disposition, "name") else {
            continue;
        };
        let value = match disposition_param(disposition, "filename") {
            Some(filename) => serde_json::json!({ "filename": filename, "size": content.len() }),
            None => form_value(String::from_utf8_lossy(content).into_owned()),
        };
        fields.push((name, value));
    }
    fields
}

fn disposition_param(disposition: &str, key: &str) -> Option<String> {
    disposition.split(';').skip(1).find_map(|param| {
        let (name, value) = param.trim().split_once('=')?;
        (name.trim() == key).then(|| value.trim().trim_matches('"').to_owned())
    })
}

fn split<'a>(haystack: &'a [u8], needle: &[u8]) -> Vec<&'a [u8]> {
    let mut pieces = Vec::new();
    let mut rest = haystack;
    while let Some(at) = find(rest, needle) {
        pieces.push(&rest[..at]);
        rest = &rest[at + needle.len()..];
    }
    pieces.push(rest);
    pieces
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// An integer parameter, sent as a number or a numeric string.
pub(crate) fn int(params: &Value, key: &str) -> Option<i64> {
    match params.get(key)? {
        Value::Number(number) => number.as_i64(),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

/// A string parameter (numbers given as strings too).
pub(crate) fn string(params: &Value, key: &str) -> Option<String> {
    match params.get(key)? {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// A boolean parameter (`true`, `"true"`, `1`, `"1"`).
pub(crate) fn boolean(params: &Value, key: &str) -> Option<bool> {
    match params.get(key)? {
        Value::Bool(flag) => Some(*flag),
        Value::Number(number) => Some(number.as_i64() != Some(0)),
        Value::String(text) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "1" => Some(true),
            "false" | "0" | "" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A JSON-serialised parameter (object or array), sent as JSON or as a
/// string holding JSON.
pub(crate) fn object(params: &Value, key: &str) -> Option<Value> {
    match params.get(key)? {
        Value::String(text) => serde_json::from_str(text).ok(),
        Value::Null => None,
        value => Some(value.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_form_query_and_multipart() {
        let json_body = br#"{"chat_id": 5, "text": "hi"}"#;
        assert_eq!(
            parse(Some("application/json"), None, json_body),
            json!({"chat_id": 5, "text": "hi"})
        );
        let form = parse(
            Some("application/x-www-form-urlencoded"),
            Some("offset=3"),
            b"chat_id=-100&text=a+b%21&reply_markup=%7B%22inline_keyboard%22%3A%5B%5D%7D",
        );
        assert_eq!(int(&form, "chat_id"), Some(-100));
        assert_eq!(int(&form, "offset"), Some(3));
        assert_eq!(string(&form, "text").as_deref(), Some("a b!"));
        assert_eq!(
            object(&form, "reply_markup"),
            Some(json!({"inline_keyboard": []}))
        );

        let body = "--XyZ\r\nContent-Disposition: form-data; name=\"url\"\r\n\r\nhttp://127.0.0.1:9/hook\r\n\
                    --XyZ\r\nContent-Disposition: form-data; name=\"drop_pending_updates\"\r\n\r\ntrue\r\n\
                    --XyZ--\r\n";
        let multipart = parse(
            Some("multipart/form-data; boundary=XyZ"),
            None,
            body.as_bytes(),
        );
        assert_eq!(
            string(&multipart, "url").as_deref(),
            Some("http://127.0.0.1:9/hook")
        );
        assert_eq!(boolean(&multipart, "drop_pending_updates"), Some(true));
    }
}

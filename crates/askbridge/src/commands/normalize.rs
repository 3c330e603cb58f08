//! `askbridge normalize`: any dialect in, the canonical ask (or path-named
//! errors) out.

use askbridge_core::normalize;
use serde::Serialize;

use crate::wire::api::ProblemJson;
use crate::wire::ask::CanonicalAsk;

#[derive(Serialize)]
#[serde(untagged)]
enum Report {
    Ok {
        ok: bool,
        ask: Box<CanonicalAsk>,
        warnings: Vec<ProblemJson>,
    },
    Err {
        ok: bool,
        errors: Vec<ProblemJson>,
    },
}

/// Normalises `input` (JSON of any dialect, or assistant text) and returns
/// the report as JSON and whether the ask was valid.
pub fn run(input: &str) -> (serde_json::Value, bool) {
    let report = match normalize::normalize_input(input) {
        Ok(normalized) => Report::Ok {
            ok: true,
            ask: Box::new(CanonicalAsk::from(&normalized.ask)),
            warnings: normalized.warnings.iter().map(ProblemJson::from).collect(),
        },
        Err(errors) => Report::Err {
            ok: false,
            errors: errors.iter().map(ProblemJson::from).collect(),
        },
    };
    let valid = matches!(report, Report::Ok { .. });
    let json = serde_json::to_value(&report).unwrap_or_else(
        |e| serde_json::json!({"ok": false, "errors": [{"path": "", "message": e.to_string()}]}),
    );
    (json, valid)
}

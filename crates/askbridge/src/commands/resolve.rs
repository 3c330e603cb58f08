//! `askbridge resolve`: how a reply resolves, one reply at a time
//! (`--options`), as JSON lines (`--jsonl`), or against a whole ask (`--ask`).

use std::io::{self, BufRead, Write};

use askbridge_core::model::Ask;
use askbridge_core::resolve::{AskMatcher, OptionMatcher};

use crate::wire::resolution::{
    AskResolutionJson, QuestionResolutionJson, ResolutionJson, ResolveRequest,
};

/// Resolves one reply against a plain option list.
pub fn one(labels: &[&str], multi: bool, letters: bool, reply: &str) -> ResolutionJson {
    let matcher = OptionMatcher::new(labels, multi, letters);
    let (resolution, shown) = matcher.resolve_shown(reply);
    ResolutionJson::new(&resolution, labels, shown)
}

/// Resolves each JSON line of `input` as it is read and writes one output
/// line per non-empty input line, in order; returns whether every line was
/// well-formed. A malformed line yields `{"error": {"line", "message"}}` in
/// its place.
pub fn jsonl(input: impl BufRead, out: &mut impl Write) -> io::Result<bool> {
    let mut all_ok = true;
    let mut input = input;
    let mut line = String::new();
    for number in 0_usize.. {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<ResolveRequest>(&line) {
            Ok(request) => {
                let labels: Vec<&str> = request.options.iter().map(|o| o.label()).collect();
                let resolution = one(&labels, request.multi, request.letters, &request.reply);
                serde_json::to_writer(&mut *out, &resolution)?;
            }
            Err(error) => {
                all_ok = false;
                let error = serde_json::json!({"error": {"line": number + 1, "message": error.to_string()}});
                serde_json::to_writer(&mut *out, &error)?;
            }
        }
        out.write_all(b"\n")?;
    }
    Ok(all_ok)
}

/// Resolves a reply to a whole ask, every question open.
pub fn against_ask(ask: &Ask, reply: &str) -> AskResolutionJson {
    let matcher = AskMatcher::new(ask);
    let open: Vec<usize> = (0..ask.questions.len()).collect();
    let resolved = matcher.resolve(reply, &open);
    let answers: Vec<QuestionResolutionJson> = resolved
        .iter()
        .map(|(q, resolution)| {
            let question = &ask.questions[*q];
            let labels: Vec<&str> = question.options.iter().map(|o| o.label.as_str()).collect();
            let labels: Vec<&str> = match question.kind {
                askbridge_core::model::QuestionKind::Confirm => vec!["yes", "no"],
                _ => labels,
            };
            QuestionResolutionJson {
                id: question.id.clone(),
                resolution: ResolutionJson::new(resolution, &labels, String::new()),
            }
        })
        .collect();
    let unanswered = ask
        .questions
        .iter()
        .enumerate()
        .filter(|(i, _)| resolved.iter().all(|(q, _)| q != i))
        .map(|(_, q)| q.id.clone())
        .collect();
    AskResolutionJson {
        answers,
        unanswered,
    }
}

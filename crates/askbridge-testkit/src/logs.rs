//! What a real server said, for the message of a test that failed
//! because of it.

use std::fs;
use std::path::Path;

/// The last 40 lines of each of `files` in `dir` (those that exist and
/// are not empty), each under its name.
pub(crate) fn output_tail(dir: &Path, files: &[&str]) -> String {
    let mut tail = String::new();
    for name in files {
        let text = fs::read_to_string(dir.join(name)).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let last = &lines[lines.len().saturating_sub(40)..];
        if !last.is_empty() {
            tail.push_str(&format!("--- {name} (end) ---\n{}\n", last.join("\n")));
        }
    }
    tail
}

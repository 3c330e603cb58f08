//! The commands: the daemon (`serve`), MCP on stdio (`mcp`), asking from
//! the shell (`ask`), and the core as tools (`normalize`, `resolve`,
//! `render`).
//!
//! Each command reads its input as a string and writes to a writer, so the
//! tests run them in-process; `main.rs` only wires files and exit codes.

pub mod ask;
pub mod mcp;
pub mod normalize;
pub mod render;
pub mod resolve;
pub mod serve;

use std::io::{self, Read};
use std::path::Path;

/// Reads a file, or standard input for `-`.
pub fn read_input(path: &Path) -> io::Result<String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        io::stdin().read_to_string(&mut text)?;
        Ok(text)
    } else {
        std::fs::read_to_string(path)
    }
}

//! The check behind each crate's `tests/layers.rs`: every module of
//! `src/lib.rs` has its place in the including file's `ORDER`, and no
//! module's code uses a module later in it. Doc comments may point
//! anywhere. Shared by `askbridge-core` and `askbridge`; the latter
//! includes this file by path.

use std::path::{Path, PathBuf};

use super::ORDER;

fn source(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read source")
}

/// The `.rs` files under `dir`, at any depth.
fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read module folder") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The source without comment lines, so doc comments may point anywhere.
fn code(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("//") {
                ""
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The crate's modules a piece of code names: `crate::name…`, the first
/// name of each item in `crate::{…}` (across lines too), and `super::name`
/// when `depth` `super::`s reach the crate root, with the line each is on.
/// `depth` is how deep the file's module sits: 1 for `src/m.rs` and
/// `src/m/mod.rs`, 2 for `src/m/n.rs`.
fn modules_named(code: &str, depth: usize) -> Vec<(usize, String)> {
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let ident = |text: &str| -> String {
        text.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut named = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group: split at commas outside braces.
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        named.push((line_of(at), ident(&group[start..i])));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        named.push((line_of(at), ident(&group[start..i])));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            named.push((line_of(at), ident(rest)));
        }
    }
    let root = "super::".repeat(depth);
    for (at, _) in code.match_indices(&root) {
        let chained = code[..at].ends_with("::");
        let rest = &code[at + root.len()..];
        if !chained && !rest.starts_with("super::") {
            named.push((line_of(at), ident(rest)));
        }
    }
    named.retain(|(_, name)| !name.is_empty());
    named
}

/// How deep the module of `file` (under `src`) sits.
fn depth(src: &Path, file: &Path) -> usize {
    let parts = file
        .strip_prefix(src)
        .expect("under src")
        .components()
        .count();
    if file.ends_with("mod.rs") {
        parts - 1
    } else {
        parts
    }
}

#[test]
fn every_module_has_its_place_in_the_order() {
    let lib = source(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"));
    let mut declared: Vec<&str> = lib
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';'))
        .collect();
    declared.sort_unstable();
    let mut ordered = ORDER.to_vec();
    ordered.sort_unstable();
    assert_eq!(declared, ordered, "add a new module to ORDER in its place");
}

#[test]
fn no_module_uses_a_module_later_in_the_order() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for (rank, module) in ORDER.iter().enumerate() {
        let mut files = Vec::new();
        let single = src.join(format!("{module}.rs"));
        if single.exists() {
            files.push(single);
        }
        let dir = src.join(module);
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        }
        assert!(!files.is_empty(), "no source for module {module}");
        for file in files {
            let text = source(&file);
            let lines: Vec<&str> = text.lines().collect();
            for (number, name) in modules_named(&code(&text), depth(&src, &file)) {
                if ORDER[rank + 1..].contains(&name.as_str()) {
                    wrong.push(format!(
                        "{}:{number}: {module} uses {name}: {}",
                        file.display(),
                        lines[number - 1].trim()
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a module uses one later in the order:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_check_sees_every_form_of_path() {
    let code = "use crate::{\n    bridge::Bridge,\n    http::{self, ApiError},\n};\n\
                let x = crate::web::page();\nuse crate::{store, wire::api::{A, B}};\n\
                use super::super::mcp::Tool;\nuse super::sibling;\n\
                use super::super::super::deeper;";
    let names: Vec<(usize, String)> = modules_named(code, 2);
    let names: Vec<(usize, &str)> = names.iter().map(|(n, s)| (*n, s.as_str())).collect();
    assert_eq!(
        names,
        [
            (1, "bridge"),
            (1, "http"),
            (5, "web"),
            (6, "store"),
            (6, "wire"),
            (7, "mcp")
        ]
    );
}

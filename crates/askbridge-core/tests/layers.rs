//! askbridge-core's modules read in the order data flows through them:
//! `model` → `resolve` → `normalize` → `outcome` → `lifecycle` → `render`.
//! A module uses only modules before it (and itself), never one after it,
//! so there is no import circle. Doc comments may point anywhere.

use std::path::Path;

/// The modules of the crate, in flow order.
const ORDER: &[&str] = &[
    "model",
    "resolve",
    "normalize",
    "outcome",
    "lifecycle",
    "render",
];

fn source(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read source")
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
fn no_module_uses_a_module_later_in_the_flow() {
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
            for entry in std::fs::read_dir(&dir).expect("read module folder") {
                let path = entry.expect("dir entry").path();
                if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        assert!(!files.is_empty(), "no source for module {module}");
        for file in files {
            for (number, line) in source(&file).lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                // `crate::later::…`, or `later` inside `use crate::{…}`.
                let grouped = code.split_once("crate::{").map(|(_, rest)| rest);
                for later in &ORDER[rank + 1..] {
                    let in_group = grouped.is_some_and(|rest| {
                        rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .any(|word| word == *later)
                    });
                    if code.contains(&format!("crate::{later}")) || in_group {
                        wrong.push(format!(
                            "{}:{}: {module} uses {later}: {}",
                            file.display(),
                            number + 1,
                            code
                        ));
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a module uses one later in the flow:\n{}",
        wrong.join("\n")
    );
}

//! askbridge-core stays pure: no I/O crate among its dependencies and no I/O,
//! clock, environment or thread use in its source.

use std::path::Path;

/// The only crates the core may depend on.
const ALLOWED: &[&str] = &[
    "caseless",
    "serde_json",
    // SHA-256 for the audit trail's hash chain: computation only.
    "sha2",
    "thiserror",
    "unicode-normalization",
];

#[test]
fn core_depends_on_no_io_crate() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .expect("read Cargo.toml");
    let mut section = String::new();
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.trim_matches(['[', ']']).to_owned();
            continue;
        }
        let is_dependency_table = section == "dependencies"
            || (section.starts_with("target.") && section.ends_with(".dependencies"));
        if is_dependency_table && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.', ' ']).next().unwrap_or("").trim();
            found.push(name.to_owned());
        }
        if let Some(name) = section.strip_prefix("dependencies.") {
            found.push(name.to_owned());
        }
    }
    assert!(
        !found.is_empty(),
        "no dependencies found: has the manifest format changed?"
    );
    let forbidden: Vec<&String> = found
        .iter()
        .filter(|d| !ALLOWED.contains(&d.as_str()))
        .collect();
    assert!(
        forbidden.is_empty(),
        "askbridge-core must stay pure; not allowed: {forbidden:?} (allowed: {ALLOWED:?})"
    );
}

#[test]
fn core_source_does_no_io() {
    const FORBIDDEN: &[&str] = &[
        "std::fs",
        "std::net",
        "std::env",
        "std::process",
        "std::thread",
        "SystemTime",
        "Instant::now",
        "std::io::stdin",
        "println!",
        "eprintln!",
    ];
    let mut hits = Vec::new();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut dirs = vec![src];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("read source");
                for word in FORBIDDEN {
                    if text.contains(word) {
                        hits.push(format!("{}: {word}", path.display()));
                    }
                }
            }
        }
    }
    assert!(
        hits.is_empty(),
        "I/O in askbridge-core:\n{}",
        hits.join("\n")
    );
}

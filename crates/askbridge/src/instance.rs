//! This instance's name among those sharing a database.
//!
//! The name is the delivery owner recorded on each new ask and the holder
//! of the instance's leases, so a restarted instance should come back
//! under the same one (it then takes its own undelivered asks and bot
//! connections back at once), and two live instances must never share
//! one. Unless `[cluster] instance` names it, the name is kept in
//! `<data_dir>/instance`, locked while the process runs: a second process
//! on the same data directory finds it locked and takes a fresh name.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

use anyhow::Context;

/// The file in the data directory that keeps the name.
const FILE: &str = "instance";

/// Longest name accepted.
const MAX_LEN: usize = 100;

/// Whether `name` can name an instance: 1 to 100 ASCII letters, digits,
/// `.`, `_`, `-` or `:`.
pub fn is_valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':'))
}

/// An instance's name, and the lock that keeps it this process's own.
#[derive(Debug)]
pub struct InstanceName {
    /// The name.
    pub name: String,
    /// Released when dropped.
    _lock: Option<File>,
}

impl InstanceName {
    /// The name, its lock held until the process exits.
    pub fn hold(self) -> String {
        let InstanceName { name, _lock } = self;
        // The lock file stays open (and locked) for the process's life.
        std::mem::forget(_lock);
        name
    }

    /// The configured name, or the one kept in `data_dir` (written on
    /// first use), or — when another live process holds that one — a
    /// fresh name for this process only.
    pub fn resolve(configured: Option<&str>, data_dir: &Path) -> anyhow::Result<InstanceName> {
        if let Some(name) = configured {
            return Ok(InstanceName {
                name: name.to_owned(),
                _lock: None,
            });
        }
        let path = data_dir.join(FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let name = fresh();
                tracing::info!(
                    file = %path.display(),
                    instance = %name,
                    "another process runs on this data directory; using a fresh instance name"
                );
                return Ok(InstanceName { name, _lock: None });
            }
            Err(TryLockError::Error(error)) => {
                return Err(error).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        let mut kept = String::new();
        file.read_to_string(&mut kept)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let kept = kept.trim();
        let name = if is_valid(kept) {
            kept.to_owned()
        } else {
            let name = fresh();
            file.set_len(0)
                .and_then(|()| file.rewind())
                .and_then(|()| writeln!(file, "{name}"))
                .and_then(|()| file.sync_all())
                .with_context(|| format!("cannot write {}", path.display()))?;
            name
        };
        Ok(InstanceName {
            name,
            _lock: Some(file),
        })
    }
}

/// `<host>-<8 hex digits>`: readable in logs, unique enough.
fn fresh() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|host| {
            host.trim()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
                .take(60)
                .collect::<String>()
        })
        .filter(|host| !host.is_empty())
        .unwrap_or_else(|| "askbridge".to_owned());
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("{host}-{}", &random[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "askbridge-instance-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    #[test]
    fn names_are_short_and_plain() {
        for good in ["a", "askbridge-a", "host.example:8790", "x_1"] {
            assert!(is_valid(good), "{good}");
        }
        for bad in ["", "a b", "a/b", "é", &"x".repeat(101)] {
            assert!(!is_valid(bad), "{bad}");
        }
        assert!(is_valid(&fresh()));
    }

    #[test]
    fn the_kept_name_comes_back_after_a_restart_and_a_second_process_gets_its_own() {
        let dir = scratch();
        let first = InstanceName::resolve(None, &dir).expect("first");
        // Locked by `first` (another open file description, like another
        // process): a fresh name.
        let second = InstanceName::resolve(None, &dir).expect("second");
        assert_ne!(first.name, second.name);
        let name = first.name.clone();
        drop(first);
        let again = InstanceName::resolve(None, &dir).expect("again");
        assert_eq!(again.name, name);
        let configured = InstanceName::resolve(Some("named"), &dir).expect("named");
        assert_eq!(configured.name, "named");
        drop(again);
        let _ = std::fs::remove_dir_all(dir);
    }
}

//! A coding agent's settings file, changed as its owner would change it:
//! `hooks install` and `uninstall` go through here.
//!
//! The file may hold secrets (an API key in Claude Code's `env`) and may
//! be a symlink into a dotfiles repository. So a change is written
//! through the symlink to the real file, with that file's mode (and,
//! where allowed, its owner), into a temporary file of its own in the same
//! directory and renamed over it: a reader sees the old file or the new
//! one, never half of one. Changes are one at a time: each holds a lock
//! (`….askbridge.lock`, beside the real file) from reading the file to
//! renaming the new one in. The file as it was before askbridge first
//! changed it is kept as `….askbridge.bak`, and never replaced.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How many symlinks a settings path may go through.
const MAX_LINKS: usize = 40;

/// A settings file, locked for one change.
#[derive(Debug)]
pub struct SettingsFile {
    /// The real file: `path` through every symlink.
    real: PathBuf,
    /// Held until dropped: the lock.
    _lock: File,
}

impl SettingsFile {
    /// Locks the settings file at `path` (through its symlinks) for a
    /// change, creating its directory when missing; waits while another
    /// change holds the lock.
    pub fn lock(path: &Path) -> anyhow::Result<SettingsFile> {
        let real = real_path(path)
            .map_err(|error| anyhow::anyhow!("cannot follow {}: {error}", path.display()))?;
        if let Some(dir) = real.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|error| anyhow::anyhow!("cannot create {}: {error}", dir.display()))?;
        }
        let lock_path = with_suffix(&real, ".askbridge.lock");
        let lock = private_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .and_then(|file| file.lock().map(|()| file))
            .map_err(|error| anyhow::anyhow!("cannot lock {}: {error}", lock_path.display()))?;
        Ok(SettingsFile { real, _lock: lock })
    }

    /// The real file (`path` through its symlinks).
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// The file's text; `None` when it does not exist.
    pub fn read(&self) -> anyhow::Result<Option<String>> {
        match std::fs::read_to_string(&self.real) {
            Ok(text) => Ok(Some(text)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => anyhow::bail!("cannot read {}: {error}", self.real.display()),
        }
    }

    /// Where the file as it was before askbridge first changed it is kept.
    pub fn backup_path(&self) -> PathBuf {
        with_suffix(&self.real, ".askbridge.bak")
    }

    /// The file as it was before askbridge first changed it, when kept.
    pub fn first_backup(&self) -> Option<String> {
        std::fs::read_to_string(self.backup_path()).ok()
    }

    /// Replaces the file's text with `text`. `before` (the text read
    /// under this lock) is kept as the backup unless one is kept already.
    pub fn write(&self, before: Option<&str>, text: &str) -> anyhow::Result<()> {
        let old = std::fs::metadata(&self.real).ok();
        if let Some(before) = before {
            let backup = self.backup_path();
            keep_first(&backup, before, old.as_ref()).map_err(|error| {
                anyhow::anyhow!("cannot keep a copy as {}: {error}", backup.display())
            })?;
        }
        replace(&self.real, text, old.as_ref())
            .map_err(|error| anyhow::anyhow!("cannot write {}: {error}", self.real.display()))
    }
}

/// `path` through every symlink, a dangling one too: the file a write
/// must replace so the link stays a link.
pub fn real_path(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_owned();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&path)?;
                // A relative target is relative to the link's directory;
                // joining an absolute one gives the target itself.
                path = match path.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            Ok(_) => return Ok(path),
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(path),
            Err(error) => return Err(error),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Writes `text` to a new file of its own beside `real`, with `old`'s
/// mode and owner when there was an old file, and renames it over `real`.
fn replace(real: &Path, text: &str, old: Option<&std::fs::Metadata>) -> io::Result<()> {
    let (temporary, mut file) = unique_beside(real)?;
    let written = (|| {
        if let Some(old) = old {
            keep_mode_and_owner(&file, old)?;
        }
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temporary, real)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Keeps `text` as the backup at `backup`, with `old`'s mode and owner,
/// unless a backup is there already: the first one is the file before
/// askbridge.
fn keep_first(backup: &Path, text: &str, old: Option<&std::fs::Metadata>) -> io::Result<()> {
    let mut file = match private_options().write(true).create_new(true).open(backup) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => return Ok(()),
        Err(error) => return Err(error),
    };
    let written = (|| {
        if let Some(old) = old {
            keep_mode_and_owner(&file, old)?;
        }
        file.write_all(text.as_bytes())?;
        file.sync_all()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(backup);
    }
    written
}

/// A new file beside `real` that no other change uses: its name holds
/// this process and a random number, and it is created only if new.
fn unique_beside(real: &Path) -> io::Result<(PathBuf, File)> {
    loop {
        let suffix = format!(
            ".askbridge.{}.{:016x}.tmp",
            std::process::id(),
            fastrand::u64(..)
        );
        let path = with_suffix(real, &suffix);
        match private_options().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
}

/// Options that create a file only its owner can read (where the platform
/// has modes): nothing is readable before its mode is set.
fn private_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

/// Gives `file` the owner (where this process may) and the mode of `old`.
#[cfg(unix)]
fn keep_mode_and_owner(file: &File, old: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let new = file.metadata()?;
    if (new.uid(), new.gid()) != (old.uid(), old.gid()) {
        // Only root may give a file away: anyone else keeps it, with the
        // old file's mode.
        let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
    }
    file.set_permissions(old.permissions())
}

/// Gives `file` the permissions of `old`.
#[cfg(not(unix))]
fn keep_mode_and_owner(file: &File, old: &std::fs::Metadata) -> io::Result<()> {
    file.set_permissions(old.permissions())
}

/// `path` with `suffix` added to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory of its own under the target's temporary directory.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "askbridge-settings-{name}-{}-{:x}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(&dir).expect("mkdir");
        dir
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_followed_to_its_file_and_stays_a_link() {
        let dir = scratch("link");
        std::fs::create_dir_all(dir.join("dotfiles")).expect("mkdir");
        std::fs::write(dir.join("dotfiles/settings.json"), "{}").expect("write");
        std::os::unix::fs::symlink("dotfiles/settings.json", dir.join("settings.json"))
            .expect("symlink");
        let file = SettingsFile::lock(&dir.join("settings.json")).expect("locked");
        assert_eq!(file.real(), dir.join("dotfiles/settings.json"));
        file.write(Some("{}"), "{\"a\": 1}\n").expect("written");
        let link = std::fs::symlink_metadata(dir.join("settings.json")).expect("stat");
        assert!(link.file_type().is_symlink());
        assert_eq!(
            std::fs::read_to_string(dir.join("dotfiles/settings.json")).expect("read"),
            "{\"a\": 1}\n"
        );
        // A dangling link is followed too: the write makes its target.
        std::os::unix::fs::symlink("missing.json", dir.join("dangling.json")).expect("symlink");
        assert_eq!(
            real_path(&dir.join("dangling.json")).expect("followed"),
            dir.join("missing.json")
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[cfg(unix)]
    #[test]
    fn the_mode_is_kept_and_the_first_backup_is_never_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("mode");
        let path = dir.join("settings.json");
        std::fs::write(&path, "first").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let mode =
            |path: &Path| std::fs::metadata(path).expect("stat").permissions().mode() & 0o777;
        let file = SettingsFile::lock(&path).expect("locked");
        file.write(Some("first"), "second").expect("written");
        file.write(Some("second"), "third").expect("written");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "third");
        assert_eq!(mode(&path), 0o600);
        assert_eq!(file.first_backup().as_deref(), Some("first"));
        assert_eq!(mode(&file.backup_path()), 0o600);
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(&dir)
            .expect("list")
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

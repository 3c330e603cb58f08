//! Notes of the asks `askbridge hook` processes are waiting on, so a later
//! event of the same agent session can close the ones it shows to be
//! stale (the person answered in the terminal).
//!
//! One empty file per waiting ask, `<dir>/<session>/<call>.<ask id>`
//! (session and call hashed), made once the ask is posted and removed when
//! its hook ends, however it ends. The directory is
//! `ASKBRIDGE_HOOK_STATE`, else `$XDG_RUNTIME_DIR/askbridge-hooks`, else
//! `askbridge-hooks-<user>` in the temporary directory.

use std::path::PathBuf;

use askbridge_core::hooks::MovedOn;

use crate::hashed;

/// The notes' directory.
fn dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ASKBRIDGE_HOOK_STATE").filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        return PathBuf::from(runtime).join("askbridge-hooks");
    }
    let user = std::env::var("USER").unwrap_or_else(|_| "user".to_owned());
    std::env::temp_dir().join(format!("askbridge-hooks-{user}"))
}

/// A waiting ask's note; removed when dropped.
#[derive(Debug)]
pub struct Waiting {
    path: PathBuf,
}

impl Waiting {
    /// Notes that ask `id` waits for `call` in `session`; `None` (said on
    /// standard error) when the note cannot be written: the ask then
    /// closes only when its hold runs out.
    pub fn note(session: &str, call: &str, id: &str) -> Option<Waiting> {
        let session = dir().join(hashed(session));
        let path = session.join(format!("{}.{id}", hashed(call)));
        match std::fs::create_dir_all(&session).and_then(|()| std::fs::write(&path, b"")) {
            Ok(()) => Some(Waiting { path }),
            Err(error) => {
                eprintln!(
                    "askbridge hook: cannot note the waiting ask in {}: {error}",
                    session.display()
                );
                None
            }
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The noted asks `moved` shows to be stale: (ask id, its note).
pub fn stale(moved: &MovedOn) -> Vec<(String, PathBuf)> {
    let session = dir().join(hashed(&moved.session_id));
    let call = moved.call.as_deref().map(hashed);
    let Ok(entries) = std::fs::read_dir(&session) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let (noted_call, id) = name.split_once('.')?;
            let stale = call.as_deref().is_none_or(|call| call == noted_call);
            stale.then(|| (id.to_owned(), entry.path()))
        })
        .collect()
}

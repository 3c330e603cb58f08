//! Notes of the asks `askbridge hook` processes are waiting on, so a later
//! event of the same agent session can close the ones it shows to be
//! stale (the person answered in the terminal).
//!
//! One empty file per waiting ask, `<dir>/<session>/<call>.<ask id>`
//! (session and call hashed), made once the ask is posted and removed when
//! its hook ends, however it ends. The directory is
//! `ASKBRIDGE_HOOK_STATE`, else `$XDG_RUNTIME_DIR/askbridge-hooks`, else
//! `askbridge-hooks-<user>` in the temporary directory. It is made
//! readable by its owner only (0700), and refused when it belongs to
//! another user: in a shared temporary directory, someone else could make
//! it first and read, or plant, the notes.

use std::path::{Path, PathBuf};

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

/// The notes' directory, made when missing, only its owner's; why not
/// when it cannot be made so.
fn private_dir() -> Result<PathBuf, String> {
    let dir = dir();
    make_private(&dir, current_user())?;
    Ok(dir)
}

/// Makes `dir` (with its missing parents) readable by its owner only, and
/// refuses it when it belongs to someone other than `user` (a uid).
#[cfg(unix)]
fn make_private(dir: &Path, user: u32) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let shown = dir.display();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|error| format!("cannot create {shown}: {error}"))?;
    let meta = std::fs::metadata(dir).map_err(|error| format!("cannot read {shown}: {error}"))?;
    if meta.uid() != user {
        return Err(format!(
            "{shown} belongs to another user (uid {}), who could read or plant the notes of \
             waiting asks; set ASKBRIDGE_HOOK_STATE to a directory of your own",
            meta.uid()
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|error| format!("cannot make {shown} private: {error}"))?;
    }
    Ok(())
}

/// Makes `dir` (with its missing parents).
#[cfg(not(unix))]
fn make_private(dir: &Path, _user: u32) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|error| format!("cannot create {}: {error}", dir.display()))
}

/// This process's user (its effective uid).
#[cfg(unix)]
fn current_user() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// No users to tell apart.
#[cfg(not(unix))]
fn current_user() -> u32 {
    0
}

/// What an agent's notes are filed under: its session and, for a
/// subagent, its agent id. A later event of one agent closes only that
/// agent's asks: the main agent's `Stop` never closes a subagent's
/// approval, which is still waiting for its person.
pub fn agent_session(session: &str, agent: Option<&str>) -> String {
    match agent {
        Some(agent) => format!("{session}\nagent {agent}"),
        None => session.to_owned(),
    }
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
        let dir = match private_dir() {
            Ok(dir) => dir,
            Err(why) => {
                eprintln!("askbridge hook: cannot note the waiting ask: {why}");
                return None;
            }
        };
        let session = dir.join(hashed(session));
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

impl Waiting {
    /// The ask was answered in the chat with a refusal the host may have
    /// made moot: kept, as refused, until a later event of the session
    /// shows whether the call ran anyway (the host had decided in its own
    /// prompt first, and the answer came too late) or the turn ended.
    pub fn keep_refused(self) {
        let mut refused = self.path.clone().into_os_string();
        refused.push(format!(".{REFUSED}"));
        let refused = PathBuf::from(refused);
        // Once renamed, dropping `self` removes nothing.
        if let Err(error) = std::fs::rename(&self.path, &refused) {
            eprintln!(
                "askbridge hook: cannot keep the note of the refused call in {}: {error}",
                refused.display()
            );
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The suffix of a note kept for an ask answered with a refusal
/// ([`Waiting::keep_refused`]).
const REFUSED: &str = "refused";

/// A noted ask a later event of its session concerns.
#[derive(Debug)]
pub struct Noted {
    /// The ask's id.
    pub id: String,
    /// Its note.
    pub note: PathBuf,
    /// Whether it was answered in the chat with a refusal
    /// ([`Waiting::keep_refused`]); else it is still waiting.
    pub refused: bool,
}

/// Forgets the refusals noted for `call` in `session`: the host asks
/// about the same call again, so the refused one did not run.
pub fn forget_refused(session: &str, call: &str) {
    let Ok(dir) = private_dir() else {
        return;
    };
    for noted in noted(&dir.join(hashed(session)), Some(call)) {
        if noted.refused {
            let _ = std::fs::remove_file(noted.note);
        }
    }
}

/// The noted asks `moved` concerns: for a call that ran, that call's
/// (still waiting: stale; refused: overtaken); at the end of a turn,
/// every one of the agent's.
pub fn stale(moved: &MovedOn) -> Vec<Noted> {
    let dir = match private_dir() {
        Ok(dir) => dir,
        Err(why) => {
            eprintln!("askbridge hook: cannot read the notes of waiting asks: {why}");
            return Vec::new();
        }
    };
    let session = dir.join(hashed(&agent_session(
        &moved.session_id,
        moved.agent_id.as_deref(),
    )));
    noted(&session, moved.call.as_deref())
}

/// The notes in a session's directory of `call`, or of every call.
fn noted(session: &Path, call: Option<&str>) -> Vec<Noted> {
    let call = call.map(hashed);
    let Ok(entries) = std::fs::read_dir(session) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let (noted_call, id) = name.split_once('.')?;
            let (id, refused) = match id.strip_suffix(REFUSED) {
                Some(id) => (id.strip_suffix('.')?, true),
                None => (id, false),
            };
            let concerned = call.as_deref().is_none_or(|call| call == noted_call);
            concerned.then(|| Noted {
                id: id.to_owned(),
                note: entry.path(),
                refused,
            })
        })
        .collect()
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!(
            "askbridge-hook-state-{name}-{}-{:x}",
            std::process::id(),
            fastrand::u64(..)
        ))
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
    }

    #[test]
    fn the_notes_directory_is_made_only_its_owners() {
        let dir = scratch("made").join("askbridge-hooks");
        make_private(&dir, current_user()).expect("made");
        assert_eq!(mode(&dir), 0o700);
        // One made open before is closed.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        make_private(&dir, current_user()).expect("made");
        assert_eq!(mode(&dir), 0o700);
        let _ = std::fs::remove_dir_all(dir.parent().expect("a parent"));
    }

    #[test]
    fn a_notes_directory_of_another_user_is_refused_saying_why() {
        let dir = scratch("theirs");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let owner = std::fs::metadata(&dir).expect("stat").uid();
        // As seen by someone else: the directory is not theirs.
        let refused = make_private(&dir, owner + 1).expect_err("refused");
        assert!(refused.contains("belongs to another user"), "{refused}");
        assert!(refused.contains("ASKBRIDGE_HOOK_STATE"), "{refused}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

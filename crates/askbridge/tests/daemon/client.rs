//! The askbridge binary run as a client of a daemon (`askbridge ask`,
//! `askbridge hook`): its input written to standard input, the ask id it
//! announces on standard error read back.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

/// How long a client may take to announce its ask.
const ANNOUNCED_WITHIN: Duration = Duration::from_secs(60);

/// Runs `command` with `input` on its standard input (written, then
/// closed, on a task of its own) and its standard output and error piped;
/// it is killed when dropped.
pub fn spawn_with_input(mut command: Command, input: &str) -> Child {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn askbridge");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_owned();
    tokio::spawn(async move {
        stdin
            .write_all(input.as_bytes())
            .await
            .expect("write standard input");
    });
    child
}

/// The ask id `child` announces on standard error, on a line
/// `{prefix}{id}{suffix}…`. Standard error is read on after it, so the
/// process never writes to a closed pipe.
pub async fn announced(child: &mut Child, prefix: &str, suffix: &str) -> String {
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    let id = tokio::time::timeout(ANNOUNCED_WITHIN, async {
        while let Some(line) = lines.next_line().await.expect("read stderr") {
            if let Some(rest) = line.strip_prefix(prefix)
                && let Some((id, _)) = rest.split_once(suffix)
            {
                return id.to_owned();
            }
        }
        panic!("askbridge did not announce its ask ({prefix}… {suffix})");
    })
    .await
    .expect("the ask is announced");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    id
}

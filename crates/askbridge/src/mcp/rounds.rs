//! `ask_user` by multi round-trip requests (MCP 2026-07-28, SEP-2322), for
//! clients that show forms or open links. A 2026-07-28 server may not send
//! `elicitation/create` on its own; instead:
//!
//! 1. The first call creates the ask, posts it to its channels as usual,
//!    and returns at once `input_required`: the host's form (or the link to
//!    the ask's page) under `inputRequests`, and a sealed `requestState`
//!    that names the ask.
//! 2. The client shows the form and calls `ask_user` again with
//!    `inputResponses` and the `requestState`. `accept` answers the ask
//!    (`via: "host"`), `decline` skips it, `cancel` only puts the form
//!    away: the retry then waits for an answer elsewhere like a blocking
//!    call. An ask that ended meanwhile (answered in a chat or on the page
//!    first) returns that outcome; the late answer changes nothing.
//!
//! The state is the only thing kept between the calls, and it is in the
//! client's hands, sealed ([`RequestStateCodec`]) with a key the backend
//! keeps ([`Backend::sealing_key`](super::backend::Backend::sealing_key)): a
//! retry reaches its ask after a restart and on any instance, and a
//! changed or foreign state is refused, never read as a new or another
//! ask. A retry never creates an ask.

use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, InputRequiredResult, RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::McpServer;
use super::backend::{BackendError, Snapshot};
use super::call::{
    Hangup, Opened, ProgressSink, Waiting, backend_error, invalid_ask, outcome_result,
};
use super::host::{ClientDialog, input_requests, reply_in};
use crate::error_chain as chain;

/// The name of the database secret that seals the state.
pub const STATE_SECRET: &str = "mcp/request-state";

/// Bound into every seal, so that no other sealed value of ours passes as
/// `ask_user`'s state.
const SEALED_FOR: &[u8] = b"askbridge ask_user requestState v1";

/// What `requestState` holds: the ask, and through a daemon its host key
/// (so a restarted forwarder still answers as the host).
#[derive(Debug, Serialize, Deserialize)]
struct RoundState {
    ask: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    host_key: Option<String>,
}

/// The codec of `requestState`, made from the backend's key on first use.
/// Cheap to clone; clones share it.
#[derive(Debug, Clone, Default)]
pub(super) struct StateSeal(std::sync::Arc<tokio::sync::OnceCell<RequestStateCodec>>);

/// The client of one `ask_user` round: what it can be asked in its host,
/// its name, and what its hanging up means.
#[derive(Debug, Clone)]
pub(super) struct Round {
    /// What the client shows: forms, links.
    pub dialog: ClientDialog,
    /// The client's name (`claude-code`), reported as who answered.
    pub name: Option<String>,
    /// What a closed call does to the ask.
    pub hangup: Hangup,
}

impl McpServer {
    /// `ask_user` for a 2026-07-28 client: the first call, or a retry with
    /// the `requestState` of an earlier one.
    pub(super) async fn ask_user_rounds(
        &self,
        request: CallToolRequestParams,
        round: Round,
        progress: impl ProgressSink,
        cancelled: impl Future<Output = ()> + Send,
    ) -> Result<CallToolResponse, ErrorData> {
        match request.request_state {
            None => {
                let arguments = request.arguments.unwrap_or_default();
                self.first_round(arguments, round, progress, cancelled)
                    .await
            }
            Some(state) => {
                let responses = request.input_responses.unwrap_or_default();
                self.next_round(&state, responses, round, progress, cancelled)
                    .await
            }
        }
    }

    /// Creates the ask and asks for the host's form (or link), when the
    /// client shows one and the ask wants it; otherwise waits like a
    /// blocking call.
    async fn first_round(
        &self,
        arguments: rmcp::model::JsonObject,
        round: Round,
        progress: impl ProgressSink,
        cancelled: impl Future<Output = ()> + Send,
    ) -> Result<CallToolResponse, ErrorData> {
        let can = round.dialog.forms || round.dialog.page.is_some();
        let (ask, in_host) = match self.read_ask(arguments, can) {
            Ok(read) => read,
            Err(problems) => return Ok(invalid_ask(&problems).into()),
        };
        let Opened {
            id,
            pending,
            remaining,
        } = match self.create_ask(&ask).await {
            Ok(opened) => opened,
            Err(result) => return Ok(result.into()),
        };
        if in_host
            && let Some(input) = self
                .input_required(&ask, &id, &pending, &round.dialog)
                .await?
        {
            tracing::info!(ask_id = %id, "the host's dialog asked for by a round trip");
            return Ok(input.into());
        }
        let waiting = Waiting {
            id: &id,
            ask: &ask,
            remaining,
            host: None,
        };
        Ok(self
            .wait_for_answer(waiting, progress, cancelled, round.hangup)
            .await
            .into())
    }

    /// A retry: takes the person's reply from `responses`, then returns the
    /// outcome once the ask has ended, asks for the form again when the
    /// client answered nothing, or waits for an answer elsewhere.
    async fn next_round(
        &self,
        state: &str,
        responses: std::collections::BTreeMap<String, Value>,
        round: Round,
        progress: impl ProgressSink,
        cancelled: impl Future<Output = ()> + Send,
    ) -> Result<CallToolResponse, ErrorData> {
        let id = self.open_state(state).await?;
        let status = match self.backend.status(&id).await {
            Ok(status) => status,
            Err(BackendError::NotFound(_)) => {
                return Err(ErrorData::invalid_params(
                    format!("requestState: ask {id} is not in this server's database"),
                    None,
                ));
            }
            Err(error) => return Ok(backend_error(&self.backend, &error, Some(&id)).into()),
        };
        let pending = match status.snapshot {
            Snapshot::Ended(outcome) => {
                tracing::info!(ask_id = %id, "retried after the ask ended; its outcome");
                return Ok(outcome_result(outcome).into());
            }
            Snapshot::Pending(pending) => pending,
        };
        let reply = reply_in(&status.ask, responses)
            .map_err(|message| ErrorData::invalid_params(message, None))?;
        match reply {
            Some(reply) => {
                if let Err(error) = self.take_host_reply(&id, reply, round.name).await {
                    return Ok(backend_error(&self.backend, &error, Some(&id)).into());
                }
            }
            None => {
                if let Some(input) = self
                    .input_required(&status.ask, &id, &pending, &round.dialog)
                    .await?
                {
                    return Ok(input.into());
                }
            }
        }
        // The deadline is the bridge's to keep; this only bounds the wait.
        let waiting = Waiting {
            id: &id,
            ask: &status.ask,
            remaining: Duration::from_secs(u64::from(status.ask.timeout_seconds)),
            host: None,
        };
        Ok(self
            .wait_for_answer(waiting, progress, cancelled, round.hangup)
            .await
            .into())
    }

    /// `input_required` with what `dialog` can show of ask `id` and the
    /// sealed state naming it; `None` when the client can show nothing of
    /// it.
    async fn input_required(
        &self,
        ask: &askbridge_core::model::Ask,
        id: &str,
        pending: &Value,
        dialog: &ClientDialog,
    ) -> Result<Option<InputRequiredResult>, ErrorData> {
        let Some(requests) = input_requests(ask, id, pending, dialog.forms, dialog.page.as_deref())
        else {
            return Ok(None);
        };
        let state = self
            .codec()
            .await?
            .seal_json_with(
                &RoundState {
                    ask: id.to_owned(),
                    host_key: self.backend.host_key(id),
                },
                &SealOptions::new().associated_data(SEALED_FOR),
            )
            .map_err(|error| ErrorData::internal_error(format!("requestState: {error}"), None))?;
        Ok(Some(InputRequiredResult::new(Some(requests), Some(state))))
    }

    /// The ask a `requestState` names, if this server sealed it.
    async fn open_state(&self, state: &str) -> Result<String, ErrorData> {
        let opened: RoundState = self
            .codec()
            .await?
            .open_json_with(state, SEALED_FOR)
            .map_err(|error| {
                tracing::info!(%error, "a requestState that does not open");
                ErrorData::invalid_params(
                    "requestState: not one this server gave for ask_user (changed, or from \
                     another server); nothing was answered. Call ask_user without it to ask again.",
                    None,
                )
            })?;
        if let Some(key) = &opened.host_key {
            self.backend.remember_host_key(&opened.ask, key);
        }
        Ok(opened.ask)
    }

    /// The codec, made from the backend's key the first time.
    async fn codec(&self) -> Result<&RequestStateCodec, ErrorData> {
        self.seal
            .0
            .get_or_try_init(|| async {
                let key = self
                    .backend
                    .sealing_key(STATE_SECRET)
                    .await
                    .map_err(|error| {
                        ErrorData::internal_error(
                            format!("cannot read the key for requestState: {}", chain(&error)),
                            None,
                        )
                    })?;
                RequestStateCodec::try_new(key).map_err(|error| {
                    ErrorData::internal_error(format!("the key for requestState: {error}"), None)
                })
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(key: &[u8]) -> RequestStateCodec {
        RequestStateCodec::try_new(key.to_vec()).expect("a long enough key")
    }

    #[test]
    fn a_state_opens_only_with_its_key_and_purpose() {
        let ours = codec(b"0123456789abcdef0123456789abcdef");
        let sealed = ours
            .seal_json_with(
                &RoundState {
                    ask: "ask_1".to_owned(),
                    host_key: None,
                },
                &SealOptions::new().associated_data(SEALED_FOR),
            )
            .expect("sealed");
        let opened: RoundState = ours.open_json_with(&sealed, SEALED_FOR).expect("opens");
        assert_eq!(opened.ask, "ask_1");

        let theirs = codec(b"another key, just as long as ours");
        assert!(
            theirs
                .open_json_with::<RoundState>(&sealed, SEALED_FOR)
                .is_err()
        );
        assert!(ours.open_json_with::<RoundState>(&sealed, b"else").is_err());
        let mut changed = sealed.clone();
        changed.pop();
        changed.push(if sealed.ends_with('A') { 'B' } else { 'A' });
        assert!(
            ours.open_json_with::<RoundState>(&changed, SEALED_FOR)
                .is_err()
        );
    }
}

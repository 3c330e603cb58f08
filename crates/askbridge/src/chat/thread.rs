//! Threads: the asks of one thread key (an ask's `thread`, a coding
//! agent's session) go under one first message in each conversation,
//! where the platform has threads (Slack's and Feishu's threads, a reply
//! chain on Telegram and Discord). The first ask of the key posts the
//! thread's title as that message; the message is on record (`threads`),
//! so asks posted later — after a restart, by another instance — find it.
//! A reply to it (on Slack: any message in the thread) answers the newest
//! pending ask of the thread in that conversation that the sender may
//! answer. Matrix has no threads for asks: each poll is answered in a
//! thread of its own, and Matrix threads do not nest.

use askbridge_core::failure::PlatformFailure;
use askbridge_core::model::{ChannelKind, Notice, Target, Thread};
use askbridge_core::render;

use super::driver::{ChatDriver, ChatPlatform, record_posted, storage};
use super::{Addressed, AllowList, Person, Posted, may_answer};
use crate::bridge::{Bridge, BridgeError};

impl<P: ChatPlatform> ChatDriver<P> {
    /// The first message of `thread` in `chat`, posted now if it is not
    /// on record; `None` where asks cannot go under it.
    pub(super) async fn thread_root(
        &self,
        bridge: &Bridge,
        chat: &P::Chat,
        thread: &Thread,
    ) -> Result<Option<P::MessageId>, PlatformFailure> {
        if !P::threads(chat) {
            return Ok(None);
        }
        let conversation = P::conversation(chat);
        let on_record = || async {
            bridge
                .thread_root(P::KIND, &conversation, &thread.key)
                .await
                .map_err(storage)
        };
        // Looked up first without the lock: a thread's later asks never wait
        // on another's first message.
        let mut root = on_record().await?;
        // One first message per thread at a time from this process. Two
        // instances posting the same thread's first message at once each
        // post one; the first on record is the thread, the other stays a
        // message of its own. So does one posted by a process that died
        // before recording it.
        let _posting;
        if root.is_none() {
            _posting = self.threads.lock().await;
            root = on_record().await?;
        }
        let root = match root {
            Some(root) => root,
            None => {
                let once = once_key(P::KIND, &conversation, &thread.key);
                let first = self.platform.text_message(&thread.title, chat);
                let posted = self.platform.send(chat, first, &once).await?.to_string();
                record_posted(|| {
                    bridge.save_thread_root(P::KIND, &conversation, &thread.key, &posted)
                })
                .await
                .map_err(storage)?
            }
        };
        root.parse().map(Some).map_err(|_| {
            PlatformFailure::Permanent(format!(
                "unreadable {} message id {root:?} of thread {:?}",
                P::KIND.as_str(),
                thread.key
            ))
        })
    }

    /// Posts a notice: its text (in as many messages as the platform's
    /// length limit needs), then its block, in its thread where it
    /// has one; each message named after `once` and its part. Nothing is
    /// recorded: a notice is never answered or edited.
    pub(super) async fn notify_at(
        &self,
        notice: &Notice,
        target: &Target,
        once: &str,
    ) -> Result<usize, PlatformFailure> {
        let bridge = self.bridge()?;
        let chat = self.platform.open(&target.place).await?;
        let root = match &notice.thread {
            Some(thread) => self.thread_root(&bridge, &chat, thread).await?,
            None => None,
        };
        // Its text split as the platform counts (4,000 emoji are 8,000
        // of Telegram's units), then its block.
        let caps = &self.draw.caps;
        let mut messages: Vec<P::Message> =
            render::split_message(&notice.text, caps.max_text_len, caps.unit)
                .iter()
                .map(|part| self.platform.text_message(part, &chat))
                .collect();
        if let Some(context) = &notice.context {
            let blocks = render::blocks_of(context, &self.draw.caps, self.draw.locale);
            messages.extend(
                blocks
                    .iter()
                    .map(|block| self.platform.context_message(block, &chat)),
            );
        }
        let count = messages.len();
        for (part, mut message) in messages.into_iter().enumerate() {
            if let Some(root) = &root {
                self.platform.in_thread(&mut message, root);
            }
            self.platform
                .send(&chat, message, &format!("{once}/{part}"))
                .await?;
        }
        Ok(count)
    }
}

/// The name of a thread's first message in a conversation, the same
/// however often it is sent ([`ChatPlatform::send`]'s `once`): short
/// enough for every platform's idempotency key.
fn once_key(channel: ChannelKind, conversation: &str, key: &str) -> String {
    let name = crate::hashed(&format!("{}\n{conversation}\n{key}", channel.as_str()));
    format!("thread-{name}")
}

/// The ask a reply to message `reply_to` answers when that message is a
/// thread's first: the newest pending ask of the thread posted in this
/// conversation that `person` may answer. `None` when it is no thread's
/// first message; `Some(None)` when nothing in the thread is for them.
pub(super) async fn addressed_in_thread(
    bridge: &Bridge,
    channel: ChannelKind,
    conversation: &str,
    reply_to: &str,
    person: &Person,
    allow: &AllowList,
) -> Result<Option<Option<Addressed>>, BridgeError> {
    let Some(key) = bridge.thread_of(channel, conversation, reply_to).await? else {
        return Ok(None);
    };
    for ask_id in bridge.pending_in_thread(&key).await? {
        let view = match bridge.get(&ask_id).await {
            Ok(view) => view,
            Err(BridgeError::NotFound(_)) => continue,
            Err(error) => return Err(error),
        };
        // Posted a moment ago and not on record yet: waited for, as in
        // `chat::address`, so a reply does not go to an older ask.
        let refs = bridge.message_refs_posted(&ask_id).await?;
        let Some(here) = refs
            .iter()
            .find(|message| message.channel == channel && message.conversation == conversation)
        else {
            tracing::debug!(ask_id = %ask_id, conversation, "a reply in a thread is not for an ask not posted here");
            continue;
        };
        let Some(target) = view.place(Posted::of(here).place) else {
            continue;
        };
        if may_answer(target, person, allow) {
            return Ok(Some(Some(Addressed {
                ask_id,
                question: None,
                place: Some(target.place.clone()),
            })));
        }
    }
    Ok(Some(None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threads_first_message_is_named_apart_per_conversation_and_key() {
        let one = once_key(ChannelKind::Slack, "C1", "claude-code:s1");
        assert_eq!(one, once_key(ChannelKind::Slack, "C1", "claude-code:s1"));
        assert_eq!(one.len(), "thread-".len() + 32, "fits Feishu's 50");
        assert_ne!(one, once_key(ChannelKind::Slack, "C2", "claude-code:s1"));
        assert_ne!(one, once_key(ChannelKind::Slack, "C1", "claude-code:s2"));
        assert_ne!(one, once_key(ChannelKind::Matrix, "C1", "claude-code:s1"));
    }
}

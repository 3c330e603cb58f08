//! Reach: an ask in several places — its place numbers, where each was
//! posted, the note on a place an escalation step passed it on to, the
//! reminders, and how it stands in each place. The chat driver posts and
//! closes; these are the rules it follows for the places.

use askbridge_core::failure::PlatformFailure;
use askbridge_core::lifecycle::State;
use askbridge_core::model::{ChannelKind, Place, Target, Timestamp};
use askbridge_core::render::{self, Locale, View};

use super::driver::{
    ChatDriver, ChatPlatform, Part, chat_of, message_id_of, once_key, own_refs, record_posted,
    shown_message, storage,
};
use super::{Person, Posted};
use crate::bridge::{AskView, MessageRef};
use crate::wire::api::PlaceJson;

/// A reminder to post ([`ChatPlatform::remind`]).
#[derive(Debug, Clone, Copy)]
pub struct Reminder<'a> {
    /// What it says.
    pub text: &'a str,
    /// Whom it mentions: the place's user, if it names one.
    pub user: Option<&'a str>,
    /// Its name for platforms that post a named message once
    /// ([`once_key`]).
    pub once: &'a str,
    /// The first message of the thread the question is in, if it is in
    /// one ([`ChatPlatform::in_thread`]).
    pub thread: Option<&'a str>,
}

impl<P: ChatPlatform> ChatDriver<P> {
    /// Reminds the person in place number `place` with reminder
    /// `number`: a reply to the message with the ask's controls there,
    /// saying how long is left — unless it is on record as posted there
    /// (offered again after a crash). The reminder is recorded too: a reply
    /// to it answers the ask.
    pub(super) async fn remind_view(
        &self,
        view: &AskView,
        place: usize,
        number: u32,
    ) -> Result<(), PlatformFailure> {
        let bridge = self.bridge()?;
        let refs = own_refs::<P>(&bridge, &view.id, place).await?;
        if refs
            .iter()
            .any(|message| Posted::of(message).reminder == Some(number))
        {
            return Ok(());
        }
        let Some((message, shown)) = shown_message::<P>(&bridge, &view.id, place).await? else {
            return Ok(());
        };
        let target = place_target(view, place)?;
        let text = render::reminder_text(view.deadline, bridge.now(), self.draw.locale);
        let chat = chat_of::<P>(&message)?;
        let once = once_key(&view.id, place, Part::Reminder(number));
        let reminder = Reminder {
            text: &text,
            user: target.user.as_deref(),
            once: &once,
            thread: shown.thread.as_deref(),
        };
        let id = self
            .platform
            .remind(&chat, message_id_of::<P>(&message)?, reminder)
            .await?;
        let extra = Posted {
            place,
            reminder: Some(number),
            ..Posted::default()
        };
        let posted = self.record(&view.id, &chat, id, Some(&extra));
        record_posted(|| bridge.save_message_ref(&posted))
            .await
            .map_err(storage)
    }
}

/// `drawn`, with the "passed on from …" note when place number `place` is
/// an escalation step's.
pub(super) fn passed_on(drawn: View, view: &AskView, place: usize, locale: Locale) -> View {
    match view.ask.place_delay(place) {
        Some(after) => drawn.with_note(&render::passed_on_line(&view.target.place, after, locale)),
        None => drawn,
    }
}

/// The ask's place `person` answers in ([`Ask::place_of`]: the one their
/// [`Responder::place`](askbridge_core::model::Responder::place) names).
pub fn place_of<'a>(view: &'a AskView, person: &Person) -> &'a Target {
    view.ask.place_of(&person.responder).unwrap_or(&view.target)
}

/// `person`, answering in `place` of an ask.
pub fn at_place(person: &Person, place: &Place) -> Person {
    let mut person = person.clone();
    person.responder.place = Some(place.clone());
    person
}

/// How an ask stands in each of its places at `now`, for `GET
/// /v1/asks/{id}`: posted (`escalated` for an escalation step, `reminded`
/// once a reminder was sent there) where a message of it is on record (the web
/// page shows it once it is due), closed once it ended; else given up
/// (`failed`: the numbers of the places whose delivery failed), not
/// posted yet, or never posted.
pub fn place_states(
    view: &AskView,
    refs: &[MessageRef],
    failed: &[usize],
    now: Timestamp,
) -> Vec<PlaceJson> {
    let ended = !view.state.is_pending();
    let until = view
        .outcome
        .as_ref()
        .map_or(now, |outcome| outcome.answered_at);
    view.places()
        .enumerate()
        .map(|(place, target)| {
            let kind = target.place.channel();
            let due = view
                .ask
                .place_due(place, view.created_at)
                .is_none_or(|due| due <= until);
            let mut here = refs
                .iter()
                .filter(|message| message.channel == kind)
                .map(Posted::of)
                .filter(|posted| posted.place == place)
                .peekable();
            let posted = (kind == ChannelKind::Web && due) || here.peek().is_some();
            // Reminders are on record per place: a place posted after one
            // went out was never reminded.
            let reminded = here.any(|posted| posted.reminder.is_some());
            let escalated = view.ask.place_delay(place).is_some();
            let state = match (posted, ended) {
                (true, false) if reminded => "reminded",
                (true, false) if escalated => "escalated",
                (true, false) => "posted",
                (true, true) => "closed",
                (false, _) if failed.contains(&place) => "delivery_failed",
                (false, _) if matches!(view.state, State::DeliveryFailed { .. }) => {
                    "delivery_failed"
                }
                (false, false) => "pending",
                (false, true) => "not_posted",
            };
            PlaceJson {
                target: target.to_string(),
                state,
            }
        })
        .collect()
}

/// Place number `number` of the ask (`target`) as it was posted: a
/// conversation is the one its messages went to, as recorded (a Matrix
/// alias is resolved to its room when posted, and the room kept); a
/// person's direct chat is the person; not posted yet, the target's.
pub(super) fn as_posted<P: ChatPlatform>(
    target: &Target,
    refs: &[MessageRef],
    number: usize,
) -> Place {
    if target.place.direct_user().is_some() {
        return target.place.clone();
    }
    refs.iter()
        .filter(|message| message.channel == P::KIND && Posted::of(message).place == number)
        .find_map(|message| P::parse_conversation(&message.conversation))
        .map_or_else(|| target.place.clone(), |chat| P::place_of(&chat))
}

/// The number of the ask's place `from` answers in.
pub(super) fn place_number(view: &AskView, from: &Person) -> usize {
    let here = super::place_of(view, from);
    view.places().position(|target| target == here).unwrap_or(0)
}

/// Place number `place` of the ask.
pub(super) fn place_target(view: &AskView, place: usize) -> Result<&Target, PlatformFailure> {
    view.place(place).ok_or_else(|| {
        PlatformFailure::Permanent(format!("ask {} has no place number {place}", view.id))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_places_say_where_the_ask_is_posted_escalated_closed_or_failed() {
        use askbridge_core::normalize::normalize_json;
        use serde_json::json;
        let ask = normalize_json(&json!({
            "to": ["telegram:-100@42", "slack:C1", "web"],
            "escalate": [{"afterSeconds": 600, "to": "discord:9"}, {"afterSeconds": 900, "to": "web:ops"}],
            "timeoutSeconds": 1800,
            "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]
        }))
        .expect("an ask")
        .ask;
        let created = Timestamp::from_secs(1_800_000_000);
        let view = AskView {
            id: "ask_1".to_owned(),
            target: ask.target.clone().expect("a target"),
            ask,
            created_at: created,
            deadline: created.saturating_add_secs(1_800),
            state: State::Pending,
            answers: vec![None],
            outcome: None,
            late: None,
        };
        let posted = |channel: ChannelKind, place: usize| MessageRef {
            ask_id: "ask_1".to_owned(),
            channel,
            conversation: "c".to_owned(),
            message_id: "1".to_owned(),
            extra: Some(
                Posted {
                    place,
                    ..Posted::default()
                }
                .to_extra(),
            ),
        };
        let states = |refs: &[MessageRef], failed: &[usize], after: u64| -> Vec<&'static str> {
            place_states(&view, refs, failed, created.saturating_add_secs(after))
                .into_iter()
                .map(|place| place.state)
                .collect()
        };
        // Telegram posted, Slack failed; the web page at once; Discord and
        // the second page only when due.
        let refs = [posted(ChannelKind::Telegram, 0)];
        assert_eq!(
            states(&refs, &[1], 10),
            ["posted", "delivery_failed", "posted", "pending", "pending"]
        );
        let refs = [
            posted(ChannelKind::Telegram, 0),
            posted(ChannelKind::Discord, 3),
        ];
        assert_eq!(
            states(&refs, &[1], 900),
            [
                "posted",
                "delivery_failed",
                "posted",
                "escalated",
                "escalated"
            ]
        );
        // A message on record for another place does not count here.
        let refs = [posted(ChannelKind::Telegram, 3)];
        assert_eq!(states(&refs, &[], 10)[0], "pending");
        // A place says reminded once a reminder is on record there, and
        // only there: Discord, posted after it, was never reminded.
        let reminder = |channel, place| MessageRef {
            extra: Some(
                Posted {
                    place,
                    reminder: Some(1),
                    ..Posted::default()
                }
                .to_extra(),
            ),
            ..posted(channel, place)
        };
        let refs = [
            posted(ChannelKind::Telegram, 0),
            reminder(ChannelKind::Telegram, 0),
            posted(ChannelKind::Discord, 3),
        ];
        assert_eq!(
            states(&refs, &[], 900)[..4],
            ["reminded", "pending", "posted", "escalated"]
        );
    }
}

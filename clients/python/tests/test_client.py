"""The blocking client against a real daemon: ask, answer, wait, cancel,
errors."""

from __future__ import annotations

import socket
import uuid

import pytest
from support import ALICE, THREE_ANSWERS, Daemon, WebAnswerer, check_three_answers, three_questions

import askbridge
from askbridge import ApiError, AskbridgeConnectionError, Client, EndedAsk, PendingAsk


def unique_title() -> str:
    return f"test {uuid.uuid4().hex[:12]}"


def test_ask_waits_for_the_answer(client: Client, daemon: Daemon) -> None:
    title = unique_title()
    reply = {"answers": THREE_ANSWERS, "user": ALICE}
    with WebAnswerer(daemon.url, title, reply):
        outcome = client.ask(three_questions(), title=title, wait=30)
    assert isinstance(outcome, askbridge.Outcome)
    check_three_answers(outcome)
    assert outcome.ask.title == title


def test_ask_then_reply_then_wait(client: Client) -> None:
    title = unique_title()
    pending = client.ask(three_questions(), title=title, timeout_seconds=120)
    assert isinstance(pending, PendingAsk)
    assert pending.status == "pending"
    assert pending.open == ["deploy", "notify", "note"]
    assert pending.answered == []
    assert pending.host_key
    assert pending.ask.timeout_seconds == 120
    assert pending.expires_at > pending.created_at

    first = client.reply(pending.id, answers={"deploy": "Production"}, user=askbridge.ReplyUser(id="alice", name="Alice"))
    assert first.result == "accepted"
    assert first.still_open == ["notify", "note"]
    assert isinstance(first.ask, PendingAsk)
    assert first.ask.answered == ["deploy"]

    # The last answer to a question counts while the ask is pending.
    last = client.reply(pending.id, answers=THREE_ANSWERS, user=ALICE)
    assert last.result == "answered"
    assert last.still_open == []

    outcome = client.wait(pending.id, timeout=10)
    check_three_answers(outcome)
    seen = client.get(pending.id)
    assert isinstance(seen, EndedAsk)
    assert seen.places is not None and [(p.target, p.state) for p in seen.places] == [("web", "closed")]


def test_wait_returns_the_pending_ask_when_time_is_up(client: Client) -> None:
    pending = client.ask([{"question": "Still there?", "type": "confirm"}], title=unique_title())
    still = client.wait(pending.id, timeout=0.3)
    assert isinstance(still, PendingAsk)
    assert still.id == pending.id
    client.cancel(pending.id)


def test_ask_with_a_short_wait_returns_pending(client: Client) -> None:
    pending = client.ask([{"question": "Now?", "type": "confirm"}], title=unique_title(), wait=0.2)
    assert isinstance(pending, PendingAsk)
    client.cancel(pending.id)


def test_cancel(client: Client) -> None:
    pending = client.ask(three_questions(), title=unique_title())
    client.reply(pending.id, answers={"deploy": "Production"})
    cancelled = client.cancel(pending.id)
    assert isinstance(cancelled, EndedAsk)
    assert cancelled.status == "no_answer"
    assert cancelled.reason == "cancelled"
    assert cancelled.answered_by is None
    assert cancelled.answers == {"deploy": ["Production"]}
    assert cancelled.text.startswith("No answer (cancelled)")
    # Cancelling again returns the ended ask as it is.
    again = client.cancel(pending.id)
    assert isinstance(again, EndedAsk) and again.reason == "cancelled"


def test_skip_and_text_replies(client: Client) -> None:
    skipped = client.ask([{"question": "Go?", "type": "confirm"}], title=unique_title())
    result = client.reply(skipped.id, skip=True)
    assert result.result == "ended"
    assert isinstance(result.ask, EndedAsk) and result.ask.reason == "skipped"

    typed = client.ask(three_questions(), title=unique_title())
    result = client.reply(typed.id, text="Q1: 2")
    assert result.result == "accepted"
    assert isinstance(result.ask, PendingAsk) and result.ask.answered == ["deploy"]
    client.cancel(typed.id)


def test_ask_accepts_an_ask_model_and_a_dict(client: Client) -> None:
    model = askbridge.Ask(
        title=unique_title(),
        context=askbridge.Context(text="- replicas: 2\n+ replicas: 6", language="diff"),
        questions=[askbridge.Question(question="Apply?", type="confirm")],
        timeout_seconds=60,
    )
    from_model = client.ask(model)
    assert isinstance(from_model, PendingAsk)
    assert from_model.ask.context == askbridge.Context(text="- replicas: 2\n+ replicas: 6", language="diff")
    assert from_model.ask.questions[0].type == "confirm"
    assert from_model.ask.timeout_seconds == 60

    # A dict in another dialect (Claude Code's), with keyword fields on top.
    from_dict = client.ask(
        {"questions": [{"header": "Auth", "question": "Which auth?", "options": [{"label": "OAuth"}, {"label": "Keys"}], "multiSelect": True}]},
        title=unique_title(),
        timeout_seconds=90,
    )
    assert isinstance(from_dict, PendingAsk)
    assert from_dict.ask.questions[0].id == "auth"
    assert from_dict.ask.questions[0].type == "multi"
    assert from_dict.ask.timeout_seconds == 90
    for ask in (from_model, from_dict):
        client.cancel(ask.id)


def test_idempotency_key_returns_the_same_ask(client: Client) -> None:
    key = f"test-{uuid.uuid4().hex}"
    questions = [{"question": "Once?", "type": "confirm"}]
    first = client.ask(questions, title="idempotent", idempotency_key=key)
    second = client.ask(questions, title="idempotent", idempotency_key=key)
    assert first.id == second.id
    with pytest.raises(ApiError) as refused:
        client.ask([{"question": "Something else?", "type": "confirm"}], idempotency_key=key)
    assert refused.value.status == 409
    assert refused.value.code == "idempotency_conflict"
    client.cancel(first.id)


def test_list_asks(client: Client) -> None:
    pending = client.ask([{"question": "Listed?", "type": "confirm"}], title=unique_title())
    listed = client.list_asks(status="pending", channel="web")
    assert pending.id in [ask.id for ask in listed]
    assert all(isinstance(ask, PendingAsk) for ask in listed)
    client.cancel(pending.id)


def test_invalid_ask_raises_api_error(client: Client) -> None:
    with pytest.raises(ApiError) as raised:
        client.ask([{"question": "Deploy?", "options": ["Staging"]}])
    error = raised.value
    assert error.status == 422
    assert error.code == "invalid_ask"
    assert error.path == "questions[0].options"
    assert "at least 2 options" in error.message
    assert [(p.path, p.message) for p in error.errors] == [(error.path, error.message)]
    assert isinstance(error, askbridge.AskbridgeError)
    assert "422 invalid_ask" in str(error)


def test_unknown_ask_is_not_found(client: Client) -> None:
    with pytest.raises(ApiError) as raised:
        client.get("ask_00000000000000000000000000000000")
    assert raised.value.status == 404
    assert raised.value.code == "not_found"
    assert raised.value.path == "id"


def test_reply_to_an_ended_ask_is_refused(client: Client) -> None:
    pending = client.ask([{"question": "Late?", "type": "confirm"}], title=unique_title())
    client.cancel(pending.id)
    with pytest.raises(ApiError) as raised:
        client.reply(pending.id, answers={"late": "yes"})
    assert raised.value.status == 409
    assert raised.value.code == "already_answered"


def test_reply_needs_exactly_one_kind_of_answer(client: Client) -> None:
    with pytest.raises(ValueError):
        client.reply("ask_x")
    with pytest.raises(ValueError):
        client.reply("ask_x", text="yes", skip=True)


def test_unreachable_daemon_raises_connection_error() -> None:
    # A port that was free a moment ago: nothing listens there.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with Client(f"http://127.0.0.1:{port}", timeout=5) as unreachable:
        with pytest.raises(AskbridgeConnectionError) as raised:
            unreachable.get("ask_x")
    assert isinstance(raised.value, askbridge.AskbridgeError)
    assert raised.value.__cause__ is not None


def test_escalation_and_reminders_go_on_the_wire(client: Client) -> None:
    ask = askbridge.Ask(
        title=unique_title(),
        questions=[askbridge.Question(question="Ship?", type="confirm")],
        timeout_seconds=1800,
        escalate=[askbridge.EscalationStep(after_seconds=600, to=["slack:C0ONCALL", "web:oncall"])],
        remind_after_seconds=300,
        remind_every_seconds=300,
    )
    pending = client.ask(ask)
    assert isinstance(pending, PendingAsk)
    assert [(step.after_seconds, step.to) for step in pending.ask.escalate or []] == [
        (600, "slack:C0ONCALL"),
        (600, "web:oncall"),
    ]
    assert pending.ask.remind_after_seconds == 300
    assert pending.ask.remind_every_seconds == 300
    client.cancel(pending.id)

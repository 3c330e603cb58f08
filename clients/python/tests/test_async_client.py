"""The asyncio client against a real daemon: the same calls as the
blocking client, awaited."""

from __future__ import annotations

import uuid
from typing import AsyncIterator

import pytest
from support import ALICE, THREE_ANSWERS, Daemon, WebAnswerer, check_three_answers, three_questions

from askbridge import ApiError, AsyncClient, EndedAsk, PendingAsk

pytestmark = pytest.mark.anyio


@pytest.fixture
async def aclient(daemon: Daemon) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(daemon.url, timeout=10) as client:
        yield client


async def test_ask_waits_for_the_answer(aclient: AsyncClient, daemon: Daemon) -> None:
    title = f"async {uuid.uuid4().hex[:12]}"
    with WebAnswerer(daemon.url, title, {"answers": THREE_ANSWERS, "user": ALICE}):
        outcome = await aclient.ask(three_questions(), title=title, wait=30)
    check_three_answers(outcome)


async def test_ask_reply_wait_get(aclient: AsyncClient) -> None:
    pending = await aclient.ask(three_questions(), title=f"async {uuid.uuid4().hex[:12]}")
    assert isinstance(pending, PendingAsk)
    replied = await aclient.reply(pending.id, answers=THREE_ANSWERS, user=ALICE)
    assert replied.result == "answered"
    check_three_answers(await aclient.wait(pending.id, timeout=10))
    assert isinstance(await aclient.get(pending.id), EndedAsk)
    listed = await aclient.list_asks(limit=5)
    assert pending.id in [ask.id for ask in listed]


async def test_wait_times_out_then_cancel(aclient: AsyncClient) -> None:
    pending = await aclient.ask([{"question": "Async?", "type": "confirm"}])
    still = await aclient.wait(pending.id, timeout=0.3)
    assert isinstance(still, PendingAsk)
    cancelled = await aclient.cancel(pending.id)
    assert isinstance(cancelled, EndedAsk)
    assert (cancelled.status, cancelled.reason) == ("no_answer", "cancelled")


async def test_invalid_ask_raises_api_error(aclient: AsyncClient) -> None:
    with pytest.raises(ApiError) as raised:
        await aclient.ask([{"question": "Deploy?", "options": ["Staging"]}])
    assert (raised.value.status, raised.value.code, raised.value.path) == (422, "invalid_ask", "questions[0].options")

"""What the clients send, checked without a daemon (httpx's MockTransport):
request bodies, the long-wait loop beyond the daemon's one-hour cap, and
reading error bodies."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import httpx
import pytest

import askbridge
from askbridge import ApiError, AsyncClient, Client, EndedAsk, InvalidResponseError, PendingAsk

CANONICAL = {"questions": [{"id": "go", "header": "Go", "question": "Go?", "type": "confirm"}], "timeoutSeconds": 900}
PENDING = {
    "id": "ask_1",
    "status": "pending",
    "ask": CANONICAL,
    "to": "web",
    "createdAt": "2026-12-02T11:55:00Z",
    "expiresAt": "2026-12-02T12:10:00Z",
    "answered": [],
    "open": ["go"],
    "somethingNew": {"a": 1},
}
ENDED = {
    "id": "ask_1",
    "status": "answered",
    "reason": None,
    "answers": {"go": ["yes"]},
    "details": [{"id": "go", "selected": ["yes"], "values": ["yes"], "other": None, "via": "web"}],
    "answeredBy": {"channel": "web", "userId": "web", "name": None, "place": "web"},
    "answeredAt": "2026-12-02T12:00:00Z",
    "text": "Go: yes",
    "continuation": "User provided answers.",
    "ask": CANONICAL,
    "to": "web",
    "createdAt": "2026-12-02T11:55:00Z",
}


class Recorder:
    """A MockTransport handler: answers POST with `post`, GET with `get`,
    and keeps every request. With a `clock`, each request moves it on by
    its `?wait=`, as a daemon holding the request until then would."""

    def __init__(self, post: Dict[str, Any], get: Dict[str, Any], clock: Optional["FakeClock"] = None) -> None:
        self.post, self.get, self.clock = post, get, clock
        self.requests: List[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.clock is not None:
            self.clock.now += float(request.url.params.get("wait", "0"))
        return httpx.Response(201 if request.method == "POST" else 200, json=self.post if request.method == "POST" else self.get)


class FakeClock:
    """Stands in for `time.monotonic` in the client's deadline."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr("askbridge._core.time.monotonic", fake)
    return fake


def test_ask_body_uses_wire_names() -> None:
    recorder = Recorder(PENDING, ENDED)
    with Client("http://askbridge.test/", token="t0ken", http_client=httpx.Client(transport=httpx.MockTransport(recorder))) as client:
        client.ask(
            [askbridge.Question(question="Go?", multi_select=False, options=["A", askbridge.Option(label="B", recommended=True)])],
            to=askbridge.Target(channel="telegram", chat=-100, user=42),
            title="T",
            thread="session-1",
            timeout_seconds=60,
            callback_url="https://hooks.example/askbridge",
            callback_events=["ask.posted"],
            idempotency_key="k1",
        )
    request = recorder.requests[0]
    assert request.url == "http://askbridge.test/v1/asks"
    assert request.headers["authorization"] == "Bearer t0ken"
    assert request.headers["idempotency-key"] == "k1"
    assert json.loads(request.content) == {
        "questions": [{"question": "Go?", "multiSelect": False, "options": ["A", {"label": "B", "recommended": True}]}],
        "to": {"channel": "telegram", "chat": -100, "user": 42},
        "title": "T",
        "thread": "session-1",
        "timeoutSeconds": 60,
        "callbackUrl": "https://hooks.example/askbridge",
        "callbackEvents": ["ask.posted"],
    }


def test_ask_model_keeps_extra_fields_by_their_wire_name() -> None:
    ask = askbridge.Ask(questions=[{"question": "Go?"}], remindAfterSeconds=300, callback_url="https://h.example/x")
    recorder = Recorder(PENDING, ENDED)
    with Client("http://askbridge.test", http_client=httpx.Client(transport=httpx.MockTransport(recorder))) as client:
        client.ask(ask)
    assert json.loads(recorder.requests[0].content) == {
        "questions": [{"question": "Go?"}],
        "callbackUrl": "https://h.example/x",
        "remindAfterSeconds": 300,
    }


def test_unknown_response_fields_are_kept() -> None:
    recorder = Recorder(PENDING, ENDED)
    with Client("http://askbridge.test", http_client=httpx.Client(transport=httpx.MockTransport(recorder))) as client:
        pending = client.ask([{"question": "Go?"}])
    assert isinstance(pending, PendingAsk)
    assert pending.model_extra == {"somethingNew": {"a": 1}}


def test_a_wait_beyond_the_daemons_cap_loops(clock: FakeClock) -> None:
    recorder = Recorder(PENDING, ENDED, clock)
    with Client("http://askbridge.test", timeout=5, http_client=httpx.Client(transport=httpx.MockTransport(recorder))) as client:
        outcome = client.ask([{"question": "Go?"}], wait=5000)
    assert isinstance(outcome, EndedAsk)
    post, get = recorder.requests
    assert (post.method, post.url.params["wait"]) == ("POST", "3600")
    assert post.extensions["timeout"]["read"] == 5 + 3600
    assert get.method == "GET" and get.url.path == "/v1/asks/ask_1"
    assert get.url.params["wait"] == "1400"


def test_wait_without_a_limit_polls_until_ended() -> None:
    answers = iter([PENDING, PENDING, ENDED])

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.params["wait"] == "3600"
        return httpx.Response(200, json=next(answers))

    with Client("http://askbridge.test", http_client=httpx.Client(transport=httpx.MockTransport(handler))) as client:
        assert isinstance(client.wait("ask_1"), EndedAsk)


def test_error_without_the_error_shape() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="<html>Bad Gateway</html>")

    with Client("http://askbridge.test", http_client=httpx.Client(transport=httpx.MockTransport(handler))) as client:
        with pytest.raises(ApiError) as raised:
            client.get("ask_1")
    assert (raised.value.status, raised.value.code, raised.value.path) == (502, "http_502", None)
    assert "Bad Gateway" in raised.value.message


def test_unreadable_success_body() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"id": "ask_1", "status": "answered"})

    with Client("http://askbridge.test", http_client=httpx.Client(transport=httpx.MockTransport(handler))) as client:
        with pytest.raises(InvalidResponseError):
            client.get("ask_1")


def test_ids_are_escaped_in_paths() -> None:
    recorder = Recorder(PENDING, ENDED)
    with Client("http://askbridge.test", http_client=httpx.Client(transport=httpx.MockTransport(recorder))) as client:
        client.get("ask/../x")
    assert recorder.requests[0].url.raw_path == b"/v1/asks/ask%2F..%2Fx"


@pytest.mark.anyio
async def test_async_wait_beyond_the_cap_loops(clock: FakeClock) -> None:
    recorder = Recorder(PENDING, ENDED, clock)
    async with AsyncClient("http://askbridge.test", http_client=httpx.AsyncClient(transport=httpx.MockTransport(recorder))) as client:
        outcome = await client.ask([{"question": "Go?"}], wait=3600.5)
    assert isinstance(outcome, EndedAsk)
    assert [r.method for r in recorder.requests] == ["POST", "GET"]
    assert recorder.requests[1].url.params["wait"] == "0.5"


def test_a_wait_that_runs_out_returns_the_pending_ask(clock: FakeClock) -> None:
    recorder = Recorder(PENDING, PENDING, clock)
    with Client("http://askbridge.test", http_client=httpx.Client(transport=httpx.MockTransport(recorder))) as client:
        still = client.wait("ask_1", timeout=4000)
    assert isinstance(still, PendingAsk)
    assert [r.url.params["wait"] for r in recorder.requests] == ["3600", "400"]

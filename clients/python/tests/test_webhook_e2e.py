"""Webhooks end to end: a daemon with `[webhooks]` configured POSTs the
ended ask to a local receiver, which verifies it with verify_webhook.

This needs a daemon that has webhooks (docs: webhook contract); a daemon
without them refuses the `[webhooks]` section and these tests fail at
their fixture.
"""

from __future__ import annotations

import http.server
import queue
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator

import pytest
from support import ALICE, THREE_ANSWERS, Daemon, check_three_answers, run_daemon, three_questions

from askbridge import ApiError, Client, EndedAsk, PendingAsk, WebhookEvent, verify_webhook

NEW_SECRET = "e2e-new-secret"
OLD_SECRET = "e2e-old-secret"
RECEIVE_TIMEOUT = 30.0


@dataclass
class Received:
    path: str
    headers: Dict[str, str]
    body: bytes


class Receiver:
    """An HTTP server on 127.0.0.1 that answers every POST with 200 and
    queues what it got."""

    def __init__(self) -> None:
        self.requests: "queue.Queue[Received]" = queue.Queue()
        received = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                length = int(self.headers.get("content-length", "0"))
                body = self.rfile.read(length)
                headers = {name.lower(): value for name, value in self.headers.items()}
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()
                received.put(Received(self.path, headers, body))

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "Receiver":
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def next_event(self, event: str) -> Received:
        """The next request for `event`, skipping others, within the timeout."""
        deadline = time.monotonic() + RECEIVE_TIMEOUT
        while True:
            remaining = deadline - time.monotonic()
            try:
                got = self.requests.get(timeout=max(remaining, 0.001))
            except queue.Empty:
                raise AssertionError(f"no {event} webhook within {RECEIVE_TIMEOUT} s") from None
            if got.headers.get("askbridge-event") == event:
                return got


@pytest.fixture(scope="module")
def webhook_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """A daemon of its own with `[webhooks]` allowing 127.0.0.1, signing
    with two secrets (a rotation: the new one first)."""
    config = '\n[webhooks]\nallowed_hosts = ["127.0.0.1"]\n'
    directory: Path = tmp_path_factory.mktemp("askbridge-webhooks")
    with run_daemon(directory, extra_config=config, webhook_secret=f"{NEW_SECRET},{OLD_SECRET}") as daemon:
        yield daemon


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


def test_ended_ask_is_delivered_and_verifies(webhook_daemon: Daemon, receiver: Receiver) -> None:
    callback_url = f"{receiver.url}/hook"
    with Client(webhook_daemon.url, timeout=10) as client:
        pending = client.ask(
            three_questions(),
            title=f"webhook {uuid.uuid4().hex[:12]}",
            callback_url=callback_url,
            callback_events=["ask.ended"],
        )
        assert isinstance(pending, PendingAsk)
        created = client.get(pending.id)
        assert created.callback is not None
        assert created.callback.url == callback_url
        assert "ask.ended" in created.callback.events

        client.reply(pending.id, answers=THREE_ANSWERS, user=ALICE)
        got = receiver.next_event("ask.ended")

        assert got.path == "/hook"
        assert got.headers["content-type"].startswith("application/json")
        signature = got.headers["askbridge-signature"]
        # Either secret of the rotation verifies; the raw body is what is signed.
        payload = verify_webhook(got.body, signature, NEW_SECRET)
        assert verify_webhook(got.body, signature, OLD_SECRET) == payload
        assert verify_webhook(got.body, signature, ["unrelated", OLD_SECRET]) == payload

        assert payload["event"] == "ask.ended"
        assert payload["deliveryId"].startswith("whd_")
        assert got.headers["askbridge-delivery"] == payload["deliveryId"]
        assert got.headers["idempotency-key"] == payload["deliveryId"]
        assert got.headers["user-agent"].startswith("askbridge/")
        assert "callback" not in payload

        event = WebhookEvent.model_validate(payload)
        assert event.event == "ask.ended"
        assert event.ask.id == pending.id
        check_three_answers(event.ask)

        # The ask's view lists the delivery.
        seen = client.get(pending.id)
        assert isinstance(seen, EndedAsk)
        assert seen.callback is not None
        deliveries = [(d.id, d.event) for d in seen.callback.deliveries]
        assert (payload["deliveryId"], "ask.ended") in deliveries


def test_refused_callback_url(webhook_daemon: Daemon) -> None:
    # Loopback is allowed only for hosts listed exactly; 127.0.0.2 is not.
    with Client(webhook_daemon.url, timeout=10) as client:
        with pytest.raises(ApiError) as raised:
            client.ask([{"question": "Hook?", "type": "confirm"}], callback_url="http://127.0.0.2:9/hook")
    assert raised.value.status == 422
    assert raised.value.path == "callbackUrl"



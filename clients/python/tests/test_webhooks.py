"""verify_webhook: signatures computed here, independently, with hmac."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Optional

import pytest

from askbridge import EndedAsk, WebhookEvent, WebhookVerificationError, verify_webhook

SECRET = "whsec-test"
NOW = 1_700_000_000
BODY = json.dumps(
    {
        "id": "ask_1",
        "status": "answered",
        "reason": None,
        "answers": {"go": ["yes"]},
        "details": [{"id": "go", "selected": ["yes"], "values": ["yes"], "other": None, "via": "web"}],
        "answeredBy": {"channel": "web", "userId": "web", "name": None, "place": "web"},
        "answeredAt": "2026-12-02T12:00:00Z",
        "text": "Go: yes",
        "continuation": "User provided answers.",
        "ask": {"questions": [{"id": "go", "header": "Go", "question": "Go?", "type": "confirm"}], "timeoutSeconds": 900},
        "to": "web",
        "createdAt": "2026-12-02T11:55:00Z",
        "event": "ask.ended",
        "deliveryId": "whd_0123456789abcdef0123456789abcdef",
    }
).encode()


def sign(body: bytes, secret: str, timestamp: int = NOW) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def header(*secrets: str, timestamp: int = NOW) -> str:
    return ",".join([f"t={timestamp}"] + [f"v1={sign(BODY, s, timestamp)}" for s in secrets])


def test_valid_signature() -> None:
    payload = verify_webhook(BODY, header(SECRET), SECRET, now=NOW + 10)
    assert payload["event"] == "ask.ended"
    event = WebhookEvent.model_validate(payload)
    assert event.event == "ask.ended"
    assert event.delivery_id == "whd_0123456789abcdef0123456789abcdef"
    assert isinstance(event.ask, EndedAsk)
    assert event.ask.answers == {"go": ["yes"]}


def test_rotated_secrets() -> None:
    # The daemon signs with both its new and its old secret...
    both = header("new-secret", SECRET)
    # ...so a receiver that still has only the old one accepts,
    assert verify_webhook(BODY, both, SECRET, now=NOW)["id"] == "ask_1"
    # and a receiver may hold several secrets while it rotates.
    assert verify_webhook(BODY, header("new-secret"), ["other", "new-secret"], now=NOW)["id"] == "ask_1"


def test_unknown_items_are_ignored() -> None:
    assert verify_webhook(BODY, header(SECRET) + ",v2=abcdef", SECRET, now=NOW)["id"] == "ask_1"


def test_tampered_body() -> None:
    with pytest.raises(WebhookVerificationError):
        verify_webhook(BODY.replace(b'"yes"', b'"no!"'), header(SECRET), SECRET, now=NOW)


def test_wrong_secret() -> None:
    with pytest.raises(WebhookVerificationError):
        verify_webhook(BODY, header(SECRET), "not-the-secret", now=NOW)


def test_old_timestamp() -> None:
    signed = header(SECRET, timestamp=NOW - 301)
    with pytest.raises(WebhookVerificationError, match="from now"):
        verify_webhook(BODY, signed, SECRET, now=NOW)
    # Within a wider tolerance it passes.
    assert verify_webhook(BODY, signed, SECRET, tolerance=600, now=NOW)["id"] == "ask_1"


def test_future_timestamp() -> None:
    with pytest.raises(WebhookVerificationError):
        verify_webhook(BODY, header(SECRET, timestamp=NOW + 301), SECRET, now=NOW)


def test_the_timestamp_is_signed() -> None:
    # A valid signature moved to a fresh timestamp does not verify.
    moved = f"t={NOW + 100},v1={sign(BODY, SECRET, NOW)}"
    with pytest.raises(WebhookVerificationError):
        verify_webhook(BODY, moved, SECRET, now=NOW + 100)


@pytest.mark.parametrize("bad", [None, ""])
def test_missing_header(bad: Optional[str]) -> None:
    with pytest.raises(WebhookVerificationError, match="missing"):
        verify_webhook(BODY, bad, SECRET, now=NOW)


@pytest.mark.parametrize(
    "bad",
    [
        "garbage",
        f"v1={sign(BODY, SECRET)}",
        f"t=soon,v1={sign(BODY, SECRET)}",
        f"t={NOW}",
        f"t={NOW},t={NOW},v1={sign(BODY, SECRET)}",
        f"t={NOW},v1=\u00e9\u00e9",
    ],
)
def test_unparsable_header(bad: str) -> None:
    with pytest.raises(WebhookVerificationError):
        verify_webhook(BODY, bad, SECRET, now=NOW)


def test_uses_the_current_time_by_default() -> None:
    # Signed long ago: refused against the real clock.
    with pytest.raises(WebhookVerificationError):
        verify_webhook(BODY, header(SECRET), SECRET)


def test_empty_secret_is_a_mistake() -> None:
    with pytest.raises(ValueError):
        verify_webhook(BODY, header(SECRET), "", now=NOW)
    with pytest.raises(ValueError):
        verify_webhook(BODY, header(SECRET), [], now=NOW)

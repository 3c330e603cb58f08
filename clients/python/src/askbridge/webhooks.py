"""Checking that a webhook request really comes from askbridge.

askbridge signs every webhook with the header

    askbridge-signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...]

where each `v1` is the lowercase hex HMAC-SHA256 of the bytes
`"<t>." + <raw body>`, keyed with one of the daemon's secrets (one `v1`
per secret while secrets are being rotated). Verify against the raw body
bytes exactly as received, before any JSON parsing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from .errors import WebhookVerificationError

__all__ = ["SIGNATURE_HEADER", "DEFAULT_TOLERANCE", "verify_webhook"]

SIGNATURE_HEADER = "askbridge-signature"
"""The name of the header that carries the signature."""

DEFAULT_TOLERANCE = 300
"""How far (in seconds) a signature's timestamp may be from now."""

_DIGITS = re.compile(r"[0-9]+")


def verify_webhook(
    raw_body: bytes,
    header: Optional[str],
    secret: Union[str, Sequence[str]],
    tolerance: int = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> Dict[str, Any]:
    """Check a webhook's signature and return its parsed JSON body.

    `raw_body` is the request body as received; `header` is the value of
    the `askbridge-signature` header (None when it is missing); `secret` is
    the shared secret, or a list of them while rotating secrets (any one
    may match). `tolerance` is how many seconds the signed timestamp may be
    from `now` (default: the current time) in either direction.

    Raises `WebhookVerificationError` when the header is missing or cannot
    be read, no signature matches, the timestamp is out of tolerance, or
    the body is not a JSON object. Parse the result into a typed
    `WebhookEvent` with `WebhookEvent.model_validate(payload)`.
    """
    if not isinstance(raw_body, (bytes, bytearray, memoryview)):
        raise TypeError("raw_body must be the request body as bytes")
    secrets = _secrets(secret)
    if not header:
        raise WebhookVerificationError(f"missing {SIGNATURE_HEADER} header")
    timestamp, signatures = _parse_header(header)

    signed = timestamp.encode("ascii") + b"." + bytes(raw_body)
    matched = False
    for key in secrets:
        expected = hmac.new(key.encode("utf-8"), signed, hashlib.sha256).hexdigest().encode("ascii")
        for signature in signatures:
            # Compare every pair (no early exit), in constant time.
            if hmac.compare_digest(expected, signature.encode("utf-8")):
                matched = True
    if not matched:
        raise WebhookVerificationError("no signature matches the secret")

    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance:
        raise WebhookVerificationError(
            f"signature timestamp {timestamp} is more than {tolerance} s from now"
        )

    try:
        payload = json.loads(bytes(raw_body))
    except ValueError as exc:
        raise WebhookVerificationError("the body is not JSON") from exc
    if not isinstance(payload, dict):
        raise WebhookVerificationError("the body is not a JSON object")
    return payload


def _secrets(secret: Union[str, Sequence[str]]) -> List[str]:
    """The secrets to try, refusing an empty one (a configuration mistake)."""
    secrets = [secret] if isinstance(secret, str) else list(secret)
    if not secrets or any(not isinstance(s, str) or not s for s in secrets):
        raise ValueError("secret must be a non-empty string or a list of them")
    return secrets


def _parse_header(header: str) -> Tuple[str, List[str]]:
    """Reads `t=...,v1=...,v1=...`: the timestamp and the v1 signatures.

    Unknown `key=value` items (a future `v2=`) are ignored.
    """
    timestamp: Optional[str] = None
    signatures: List[str] = []
    for item in header.split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep:
            raise WebhookVerificationError(f"unreadable {SIGNATURE_HEADER} header")
        key, value = key.strip(), value.strip()
        if key == "t":
            if timestamp is not None:
                raise WebhookVerificationError(f"{SIGNATURE_HEADER} header has more than one t=")
            timestamp = value
        elif key == "v1":
            signatures.append(value)
    if timestamp is None or not _DIGITS.fullmatch(timestamp):
        raise WebhookVerificationError(f"{SIGNATURE_HEADER} header has no valid t= timestamp")
    if not signatures:
        raise WebhookVerificationError(f"{SIGNATURE_HEADER} header has no v1= signature")
    return timestamp, signatures

"""The exceptions this package raises. All derive from `AskbridgeError`."""

from __future__ import annotations

from typing import List, Optional

from .models import Problem

__all__ = [
    "AskbridgeError",
    "ApiError",
    "AskbridgeConnectionError",
    "InvalidResponseError",
    "WebhookVerificationError",
]


class AskbridgeError(Exception):
    """Base class of every error this package raises."""


class ApiError(AskbridgeError):
    """The daemon answered with an error status (4xx or 5xx).

    `code` is the stable snake_case code (`invalid_ask`, `not_found`, ...),
    `message` a sentence for people, `path` where in the request the
    problem is (`questions[0].options`, `id`, `callbackUrl`) or None, and
    `errors` every problem when there are several (`invalid_ask`).
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        path: Optional[str] = None,
        errors: Optional[List[Problem]] = None,
    ) -> None:
        super().__init__(status, code, message, path)
        self.status = status
        self.code = code
        self.message = message
        self.path = path
        self.errors: List[Problem] = list(errors or [])

    def __str__(self) -> str:
        where = f" (at {self.path})" if self.path else ""
        return f"{self.status} {self.code}: {self.message}{where}"


class AskbridgeConnectionError(AskbridgeError):
    """The daemon could not be reached, or did not answer in time.

    The underlying `httpx` exception is the `__cause__`.
    """


class InvalidResponseError(AskbridgeError):
    """The daemon answered 2xx with a body this client cannot read."""


class WebhookVerificationError(AskbridgeError):
    """A webhook request is not proven to come from askbridge: its
    signature header is missing or unreadable, no signature matches, or its
    timestamp is too old (or too far in the future)."""

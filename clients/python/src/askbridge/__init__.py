"""askbridge: ask people structured questions from an agent.

A client for the askbridge daemon's HTTP API (`Client`, `AsyncClient`),
typed models of what it sends and returns, and `verify_webhook` for
receiving its webhooks.
"""

from ._version import __version__
from .client import AsyncClient, Client
from .errors import (
    ApiError,
    AskbridgeConnectionError,
    AskbridgeError,
    InvalidResponseError,
    WebhookVerificationError,
)
from . import models as _models
from .models import *  # noqa: F403 (the models, as models.__all__ lists them)
from .webhooks import SIGNATURE_HEADER, verify_webhook

__all__ = [
    "__version__",
    "Client",
    "AsyncClient",
    "AskbridgeError",
    "ApiError",
    "AskbridgeConnectionError",
    "InvalidResponseError",
    "WebhookVerificationError",
    "verify_webhook",
    "SIGNATURE_HEADER",
]
__all__ += _models.__all__

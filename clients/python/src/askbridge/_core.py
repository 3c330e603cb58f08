"""What `Client` and `AsyncClient` share: building each request and reading
each response. The two clients differ only in how they send a request.
"""

from __future__ import annotations

import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, Iterable, List, Mapping, Optional, TypeVar, Union

import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from ._version import __version__
from .errors import ApiError, InvalidResponseError
from .models import Ask, AskView, ErrorBody, Question, ReplyResponse, ReplyUser

T = TypeVar("T")

DEFAULT_BASE_URL = "http://127.0.0.1:8790"
DEFAULT_TIMEOUT = 30.0

MAX_SERVER_WAIT = 3600.0
"""The longest `?wait=` the daemon holds one request; longer waits loop."""

AskInput = Union[Ask, Mapping[str, Any], Iterable[Union[Question, Mapping[str, Any]]]]
"""What `ask()` takes: an `Ask`, a dict (the JSON body, in any dialect the
daemon reads), or a list of questions (`Question` models or dicts)."""

_ASK_VIEW: TypeAdapter[Any] = TypeAdapter(AskView)
_ASK_VIEWS: TypeAdapter[Any] = TypeAdapter(List[AskView])


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API call: what to send, and how to read a 2xx body."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: Dict[str, str] = field(default_factory=dict)
    body: Any = None
    headers: Dict[str, str] = field(default_factory=dict)
    hold: float = 0.0
    """Seconds the daemon may hold the response (a long poll), added to the
    read timeout so that the client does not give up first."""


class Deadline:
    """The time left of a wait; `None` means no limit."""

    def __init__(self, seconds: Optional[float]) -> None:
        if seconds is not None and seconds < 0:
            raise ValueError("a wait cannot be negative")
        self._end = None if seconds is None else time.monotonic() + seconds

    def next_wait(self) -> float:
        """The `?wait=` for the next request: what is left, at most the
        daemon's cap."""
        if self._end is None:
            return MAX_SERVER_WAIT
        return max(0.0, min(self._end - time.monotonic(), MAX_SERVER_WAIT))

    def expired(self) -> bool:
        return self._end is not None and time.monotonic() >= self._end


class Base:
    """Settings and request building shared by both clients."""

    def __init__(self, base_url: str, token: Optional[str], timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._headers = {
            "accept": "application/json",
            "user-agent": f"askbridge-python/{__version__}",
        }
        if token:
            self._headers["authorization"] = f"Bearer {token}"

    def _url(self, call: Call[Any]) -> str:
        return self.base_url + call.path

    def _request_headers(self, call: Call[Any]) -> Dict[str, str]:
        return {**self._headers, **call.headers}

    def _timeout(self, call: Call[Any]) -> httpx.Timeout:
        return httpx.Timeout(self.timeout, read=self.timeout + call.hold)


# --- Calls ---------------------------------------------------------------


def create_ask(body: Dict[str, Any], wait: Optional[float], idempotency_key: Optional[str]) -> Call[Any]:
    headers = {"idempotency-key": idempotency_key} if idempotency_key else {}
    return Call(
        "POST",
        "/v1/asks",
        parse=_ASK_VIEW.validate_python,
        params=_wait_param(wait),
        body=body,
        headers=headers,
        hold=wait or 0.0,
    )


def get_ask(ask_id: str, wait: Optional[float]) -> Call[Any]:
    return Call(
        "GET",
        _ask_path(ask_id),
        parse=_ASK_VIEW.validate_python,
        params=_wait_param(wait),
        hold=wait or 0.0,
    )


def cancel_ask(ask_id: str, because: Optional[str]) -> Call[Any]:
    params = {"because": because} if because else {}
    return Call("DELETE", _ask_path(ask_id), parse=_ASK_VIEW.validate_python, params=params)


def list_asks(status: Optional[str], channel: Optional[str], limit: Optional[int]) -> Call[List[Any]]:
    params: Dict[str, str] = {}
    if status is not None:
        params["status"] = status
    if channel is not None:
        params["channel"] = channel
    if limit is not None:
        params["limit"] = str(limit)
    return Call("GET", "/v1/asks", parse=lambda data: _ASK_VIEWS.validate_python(data["asks"]), params=params)


def reply(
    ask_id: str,
    answers: Optional[Mapping[str, Any]],
    text: Optional[str],
    skip: bool,
    user: Union[ReplyUser, Mapping[str, Any], None],
    host_key: Optional[str],
) -> Call[ReplyResponse]:
    given = [answers is not None, text is not None, skip]
    if given.count(True) != 1:
        raise ValueError("give exactly one of answers, text and skip=True")
    body: Dict[str, Any]
    if answers is not None:
        body = {"answers": to_json(answers)}
    elif text is not None:
        body = {"text": text}
    else:
        body = {"skip": True}
    if user is not None:
        body["user"] = to_json(user)
    headers = {"askbridge-host-key": host_key} if host_key else {}
    return Call(
        "POST",
        _ask_path(ask_id) + "/reply",
        parse=ReplyResponse.model_validate,
        body=body,
        headers=headers,
    )


def ask_body(questions: AskInput, fields: Mapping[str, Any]) -> Dict[str, Any]:
    """The JSON body of `POST /v1/asks`.

    `fields` are wire names (`timeoutSeconds`, `callbackUrl`) set on top of
    the ask; a `None` value leaves the ask's own.
    """
    if isinstance(questions, Ask):
        body = to_json(questions)
    elif isinstance(questions, Mapping):
        body = to_json(dict(questions))
    elif isinstance(questions, (str, bytes)):
        raise TypeError("ask() takes a list of questions, an Ask or a dict, not a string")
    else:
        body = {"questions": [to_json(q) for q in questions]}
    for key, value in fields.items():
        if value is not None:
            body[key] = to_json(value)
    if not isinstance(body, dict):
        raise TypeError("an ask must be a JSON object")
    return body


def to_json(value: Any) -> Any:
    """Plain JSON data of a value that may hold models (camelCase keys,
    `None` fields left out)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, Mapping):
        return {key: to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    return value


# --- Responses -----------------------------------------------------------


def finish(call: Call[T], response: httpx.Response) -> T:
    """The parsed body of a 2xx response; `ApiError` for any other status."""
    if not response.is_success:
        raise api_error(response)
    try:
        data = response.json()
    except ValueError as exc:
        raise InvalidResponseError(f"{call.method} {call.path}: the response is not JSON") from exc
    try:
        return call.parse(data)
    except (ValidationError, KeyError, TypeError) as exc:
        raise InvalidResponseError(f"{call.method} {call.path}: unexpected response: {exc}") from exc


def api_error(response: httpx.Response) -> ApiError:
    """The `ApiError` of an error response: from its `{"error": {...}}`
    body, or from the status alone when another layer (a proxy) answered
    with something else."""
    try:
        error = ErrorBody.model_validate(response.json()["error"])
    except (ValueError, KeyError, TypeError, ValidationError):
        message = response.text.strip()[:500] or response.reason_phrase
        return ApiError(response.status_code, f"http_{response.status_code}", message)
    return ApiError(response.status_code, error.code, error.message, error.path, error.errors)


# --- Helpers -------------------------------------------------------------


def is_ended(view: Any) -> bool:
    return getattr(view, "status", "pending") != "pending"


def _ask_path(ask_id: str) -> str:
    if not ask_id:
        raise ValueError("an ask id is needed")
    return "/v1/asks/" + urllib.parse.quote(ask_id, safe="")


def _wait_param(wait: Optional[float]) -> Dict[str, str]:
    if wait is None:
        return {}
    # Milliseconds are plenty; no exponent notation (`1e-05`) in the query.
    text = f"{wait:.3f}".rstrip("0").rstrip(".")
    return {"wait": text or "0"}

"""`Client` (blocking) and `AsyncClient` (asyncio): the same methods, one
over `httpx.Client`, the other over `httpx.AsyncClient`. Requests are built
and responses read in `_core`; only sending differs here.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, List, Mapping, Optional, Sequence, Type, TypeVar, Union

import httpx

from . import _core
from ._core import DEFAULT_BASE_URL, DEFAULT_TIMEOUT, AskInput, Call, Deadline
from .errors import AskbridgeConnectionError
from .models import AskView, ReplyResponse, ReplyUser, Target

__all__ = ["Client", "AsyncClient"]

T = TypeVar("T")
Targets = Union[str, Target, Sequence[Union[str, Target]]]


def _ask_fields(
    to: Optional[Targets],
    title: Optional[str],
    context: Any,
    thread: Any,
    timeout_seconds: Optional[int],
    callback_url: Optional[str],
    callback_events: Optional[Sequence[str]],
) -> Mapping[str, Any]:
    """The keyword arguments of `ask()` under their wire names."""
    return {
        "to": to,
        "title": title,
        "context": context,
        "thread": thread,
        "timeoutSeconds": timeout_seconds,
        "callbackUrl": callback_url,
        "callbackEvents": list(callback_events) if callback_events is not None else None,
    }


def _connection_error(call: Call[Any], exc: httpx.HTTPError) -> AskbridgeConnectionError:
    return AskbridgeConnectionError(f"{call.method} {call.path}: {type(exc).__name__}: {exc}")


class Client(_core.Base):
    """A blocking client of an askbridge daemon.

        with Client("http://127.0.0.1:8790") as client:
            result = client.ask([{"question": "Deploy now?", "type": "confirm"}], wait=600)

    `token` is the daemon's API token, when it has one. `timeout` (seconds)
    bounds connecting and reading; a long poll adds its wait to the read
    timeout. Pass `http_client` to use your own `httpx.Client` (proxies,
    TLS settings); it is then yours to close.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        token: Optional[str] = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: Optional[httpx.Client] = None,
    ) -> None:
        super().__init__(base_url, token, timeout)
        self._http = http_client if http_client is not None else httpx.Client()
        self._owns_http = http_client is None

    def close(self) -> None:
        """Close the connections (only those of an `httpx.Client` this
        client made itself)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def _send(self, call: Call[T]) -> T:
        try:
            response = self._http.request(
                call.method,
                self._url(call),
                params=call.params,
                json=call.body,
                headers=self._request_headers(call),
                timeout=self._timeout(call),
            )
        except httpx.TransportError as exc:
            raise _connection_error(call, exc) from exc
        return _core.finish(call, response)

    def ask(
        self,
        questions: AskInput,
        /,
        *,
        to: Optional[Targets] = None,
        title: Optional[str] = None,
        context: Any = None,
        thread: Any = None,
        timeout_seconds: Optional[int] = None,
        callback_url: Optional[str] = None,
        callback_events: Optional[Sequence[str]] = None,
        wait: Optional[float] = None,
        idempotency_key: Optional[str] = None,
    ) -> AskView:
        """Create an ask and, with `wait`, wait up to that many seconds for
        it to end.

        `questions` is a list of questions (`Question` models or dicts), an
        `Ask`, or a dict holding the whole ask; the keyword fields are set
        on top of it. Returns an `EndedAsk` (an `Outcome`: answers, status,
        reason, who answered) when the ask ended within the wait, else a
        `PendingAsk`. Waits longer than the daemon's one-hour cap are
        continued with `GET /v1/asks/{id}?wait=`. `idempotency_key` makes a
        retry return the ask created the first time.

        Note: while the first request waits, closing it cancels the ask on
        the daemon (`cancel_on_disconnect`), as the agent stopped listening.
        """
        fields = _ask_fields(to, title, context, thread, timeout_seconds, callback_url, callback_events)
        body = _core.ask_body(questions, fields)
        deadline = Deadline(wait)
        first_wait = None if wait is None else deadline.next_wait()
        view = self._send(_core.create_ask(body, first_wait, idempotency_key))
        if wait is None or _core.is_ended(view) or deadline.expired():
            return view
        return self._wait(view.id, deadline)

    def get(self, ask_id: str) -> AskView:
        """The ask as it is now: a `PendingAsk` or an `EndedAsk`."""
        return self._send(_core.get_ask(ask_id, None))

    def wait(self, ask_id: str, timeout: Optional[float] = None) -> AskView:
        """Long-poll until the ask ends or `timeout` seconds pass (`None`:
        no limit), and return it as it is then."""
        return self._wait(ask_id, Deadline(timeout))

    def _wait(self, ask_id: str, deadline: Deadline) -> AskView:
        while True:
            view = self._send(_core.get_ask(ask_id, deadline.next_wait()))
            if _core.is_ended(view) or deadline.expired():
                return view

    def cancel(self, ask_id: str, because: Optional[str] = None) -> AskView:
        """Cancel a pending ask (it ends as `no_answer` / `cancelled`) and
        return it; an ask that has ended is returned as it is. `because`
        may be `"answered_in_host"` (the default is `"agent"`)."""
        return self._send(_core.cancel_ask(ask_id, because))

    def reply(
        self,
        ask_id: str,
        *,
        answers: Optional[Mapping[str, Any]] = None,
        text: Optional[str] = None,
        skip: bool = False,
        user: Union[ReplyUser, Mapping[str, Any], None] = None,
        host_key: Optional[str] = None,
    ) -> ReplyResponse:
        """Answer an ask over the API, as the web page does.

        Give exactly one of `answers` (question id -> a list of strings, or
        one string, a bool for confirm, None to skip that question), `text`
        (a typed reply such as `"Q1: 2"`), or `skip=True`. `user` says who
        answers; `host_key` (the created ask's `host_key`) answers as the
        agent's host.
        """
        return self._send(_core.reply(ask_id, answers, text, skip, user, host_key))

    def list_asks(
        self,
        status: Optional[str] = None,
        channel: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[AskView]:
        """Asks, newest first: `status` `"pending"` or `"all"`, `channel`
        (`"web"`, `"telegram"`, ...), `limit` 1-1000."""
        return self._send(_core.list_asks(status, channel, limit))


class AsyncClient(_core.Base):
    """The asyncio twin of `Client`: the same methods, awaited.

        async with AsyncClient("http://127.0.0.1:8790") as client:
            result = await client.ask([{"question": "Deploy now?", "type": "confirm"}], wait=600)
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        token: Optional[str] = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        super().__init__(base_url, token, timeout)
        self._http = http_client if http_client is not None else httpx.AsyncClient()
        self._owns_http = http_client is None

    async def aclose(self) -> None:
        """Close the connections (only those of an `httpx.AsyncClient` this
        client made itself)."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.aclose()

    async def _send(self, call: Call[T]) -> T:
        try:
            response = await self._http.request(
                call.method,
                self._url(call),
                params=call.params,
                json=call.body,
                headers=self._request_headers(call),
                timeout=self._timeout(call),
            )
        except httpx.TransportError as exc:
            raise _connection_error(call, exc) from exc
        return _core.finish(call, response)

    async def ask(
        self,
        questions: AskInput,
        /,
        *,
        to: Optional[Targets] = None,
        title: Optional[str] = None,
        context: Any = None,
        thread: Any = None,
        timeout_seconds: Optional[int] = None,
        callback_url: Optional[str] = None,
        callback_events: Optional[Sequence[str]] = None,
        wait: Optional[float] = None,
        idempotency_key: Optional[str] = None,
    ) -> AskView:
        """See `Client.ask`."""
        fields = _ask_fields(to, title, context, thread, timeout_seconds, callback_url, callback_events)
        body = _core.ask_body(questions, fields)
        deadline = Deadline(wait)
        first_wait = None if wait is None else deadline.next_wait()
        view = await self._send(_core.create_ask(body, first_wait, idempotency_key))
        if wait is None or _core.is_ended(view) or deadline.expired():
            return view
        return await self._wait(view.id, deadline)

    async def get(self, ask_id: str) -> AskView:
        """See `Client.get`."""
        return await self._send(_core.get_ask(ask_id, None))

    async def wait(self, ask_id: str, timeout: Optional[float] = None) -> AskView:
        """See `Client.wait`."""
        return await self._wait(ask_id, Deadline(timeout))

    async def _wait(self, ask_id: str, deadline: Deadline) -> AskView:
        while True:
            view = await self._send(_core.get_ask(ask_id, deadline.next_wait()))
            if _core.is_ended(view) or deadline.expired():
                return view

    async def cancel(self, ask_id: str, because: Optional[str] = None) -> AskView:
        """See `Client.cancel`."""
        return await self._send(_core.cancel_ask(ask_id, because))

    async def reply(
        self,
        ask_id: str,
        *,
        answers: Optional[Mapping[str, Any]] = None,
        text: Optional[str] = None,
        skip: bool = False,
        user: Union[ReplyUser, Mapping[str, Any], None] = None,
        host_key: Optional[str] = None,
    ) -> ReplyResponse:
        """See `Client.reply`."""
        return await self._send(_core.reply(ask_id, answers, text, skip, user, host_key))

    async def list_asks(
        self,
        status: Optional[str] = None,
        channel: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[AskView]:
        """See `Client.list_asks`."""
        return await self._send(_core.list_asks(status, channel, limit))

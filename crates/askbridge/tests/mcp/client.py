"""A real MCP client for askbridge's tests: the official Python `mcp` SDK.

Usage:
    client.py stdio SCENARIO BINARY [ARG ...]   spawn `BINARY ARG ...` (askbridge mcp)
    client.py http SCENARIO URL                 connect to a streamable-HTTP endpoint

Scenarios:
    basics   list the tools, then call ask_user with an invalid ask
    answer   call ask_user (with a progress token) and wait for the outcome
    cancel   call ask_user, cancel the call at its first progress
             notification, then pick the outcome up with get_answer
    abandon  call ask_user and, at its first progress notification, exit
             at once (the server sees its connection close, no cancel)
    elicit_accept   with an elicitation callback that answers Production
    elicit_decline  with an elicitation callback that declines
    elicit_wait     with an elicitation callback that waits until the
                    server cancels it (the test answers elsewhere)
    elicit_link     a client that only opens links (URL-mode elicitation):
                    its callback "opens" the link it gets; it reports
                    notifications/elicitation/complete

Everything the client sees is printed to standard output as JSON lines,
`{"event": ...}`, for the Rust test to assert on; the test answers the ask
through askbridge's HTTP API in between. Diagnostics go to standard error.
"""

import json
import os
import re
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.streamable_http import streamable_http_client

ASK = json.loads((Path(__file__).parent / "deploy_ask.json").read_text())
"""The ask every scenario sends (the Rust tests send it too)."""

INVALID_ASK = {
    "questions": [
        {"question": "Which one?", "type": "single", "options": [{"label": "Only"}]}
    ]
}

ASK_ID = re.compile(r"ask id ([A-Za-z0-9_-]+)")


def emit(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def on_progress(progress, total, message):
    emit("progress", progress=progress, total=total, message=message)


async def basics(session):
    listed = await session.list_tools()
    emit("tools", tools=[dump(tool) for tool in listed.tools])
    result = await session.call_tool("ask_user", INVALID_ASK)
    emit("result", result=dump(result))


async def answer(session):
    result = await session.call_tool("ask_user", ASK, progress_callback=on_progress)
    emit("result", result=dump(result))


async def cancel(session):
    first = anyio.Event()
    seen = {}

    async def first_progress(progress, total, message):
        await on_progress(progress, total, message)
        seen.setdefault("message", message)
        first.set()

    async with anyio.create_task_group() as group:

        async def call():
            result = await session.call_tool(
                "ask_user", ASK, progress_callback=first_progress
            )
            emit("unexpected_result", result=dump(result))

        group.start_soon(call)
        await first.wait()
        # Cancelling the caller makes the SDK send notifications/cancelled.
        group.cancel_scope.cancel()
    match = ASK_ID.search(seen["message"])
    if match is None:
        emit("error", message="no ask id in the progress message: " + seen["message"])
        return
    ask_id = match.group(1)
    emit("cancelled", id=ask_id)
    result = await session.call_tool("get_answer", {"id": ask_id, "waitSeconds": 60})
    emit("result", result=dump(result))


async def abandon(session):
    async def first_progress(progress, total, message):
        await on_progress(progress, total, message)
        match = ASK_ID.search(message or "")
        emit("abandoning", id=match.group(1) if match else None)
        os._exit(0)

    await session.call_tool("ask_user", ASK, progress_callback=first_progress)


def elicitation_callback(reply):
    """An elicitation callback that reports the request, then `reply`s."""

    async def callback(context, params):
        emit("elicitation", request_id=context.request_id, params=dump(params))
        return await reply(params)

    return callback


async def accept(params):
    return types.ElicitResult(action="accept", content={"deploy_target": "Production"})


async def decline(params):
    return types.ElicitResult(action="decline")


async def wait_for_cancel(params):
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        emit("elicitation_cancelled")
        raise


async def open_link(params):
    return types.ElicitResult(action="accept")


COMPLETED = anyio.Event()


async def on_message(message):
    if isinstance(message, types.ElicitCompleteNotification):
        emit("elicitation_complete", params=dump(message.params))
        COMPLETED.set()


async def answer_link(session):
    """`answer`, then wait for notifications/elicitation/complete, which may
    come on another stream than the result."""
    await answer(session)
    with anyio.fail_after(30):
        await COMPLETED.wait()


class LinkOnlySession(ClientSession):
    """A client that declares URL-mode elicitation only (the SDK declares
    forms too whenever there is a callback)."""

    def _build_capabilities(self, version):
        capabilities = super()._build_capabilities(version)
        capabilities.elicitation = types.ElicitationCapability(url=types.UrlElicitationCapability())
        return capabilities


CALLBACKS = {
    "elicit_accept": accept,
    "elicit_decline": decline,
    "elicit_wait": wait_for_cancel,
    "elicit_link": open_link,
}

SCENARIOS = {
    "basics": basics,
    "answer": answer,
    "cancel": cancel,
    "abandon": abandon,
    "elicit_accept": answer,
    "elicit_decline": answer,
    "elicit_wait": answer,
    "elicit_link": answer_link,
}


async def run(streams, scenario):
    read, write = streams
    reply = CALLBACKS.get(scenario)
    callback = elicitation_callback(reply) if reply else None
    session_type = LinkOnlySession if scenario == "elicit_link" else ClientSession
    async with session_type(
        read, write, elicitation_callback=callback, message_handler=on_message
    ) as session:
        init = await session.initialize()
        emit(
            "initialized",
            server=init.server_info.name,
            protocol=init.protocol_version,
            tools=init.capabilities.tools is not None,
        )
        await SCENARIOS[scenario](session)


async def main(argv):
    if len(argv) < 4 or argv[1] not in ("stdio", "http") or argv[2] not in SCENARIOS:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    transport, scenario = argv[1], argv[2]
    if transport == "stdio":
        params = StdioServerParameters(command=argv[3], args=argv[4:])
        async with stdio_client(params) as streams:
            await run(streams, scenario)
    else:
        async with streamable_http_client(argv[3]) as streams:
            await run(streams, scenario)
    emit("done")


if __name__ == "__main__":
    anyio.run(main, sys.argv)

"""A real 2026-07-28 MCP client for askbridge's tests: the official Python
`mcp` SDK pinned to protocol 2026-07-28 (no initialize, no session; the
host's dialog comes back as `input_required` and the call is retried).

Usage:
    rounds.py http SCENARIO URL [ARG]                 streamable HTTP
    rounds.py stdio SCENARIO BINARY [ARG ...]         spawn `BINARY ARG ...`

Scenarios:
    accept     an elicitation callback that answers Production; the SDK
               drives the round trips
    decline    an elicitation callback that declines
    hold       drives the rounds by hand: prints the `input_required`, waits
               for a line on standard input, then retries accepting
               Production (the test answers elsewhere, or restarts the
               daemon, in between)
    tampered   gets an `input_required`, then retries with its
               `requestState` changed, and with one from nowhere
    abandon    no dialog: a blocking call that, at its first progress
               notification, exits at once (its stream closes)
    get_answer ID  get_answer for ask ID, waiting up to 60 s

Everything the client sees is printed as JSON lines, `{"event": ...}`, for
the Rust test to read; diagnostics go to standard error.
"""

import json
import os
import re
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError

VERSION = "2026-07-28"

ASK = json.loads((Path(__file__).parent / "deploy_ask.json").read_text())
"""The ask every scenario sends (the Rust tests send it too)."""

ASK_ID = re.compile(r"ask id ([A-Za-z0-9_-]+)")

PRODUCTION = {"deploy_target": "Production"}


def emit(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def on_progress(progress, total, message):
    emit("progress", progress=progress, total=total, message=message)


def elicitation(reply):
    """An elicitation callback that reports the request, then replies."""

    async def callback(context, params):
        emit("elicitation", params=dump(params))
        return reply

    return callback


async def driven(client, _args):
    result = await client.call_tool("ask_user", ASK, progress_callback=on_progress)
    emit("result", result=dump(result))


async def first_round(client):
    first = await client.session.call_tool("ask_user", ASK, allow_input_required=True)
    if not isinstance(first, types.InputRequiredResult):
        emit("error", message="expected input_required, got " + json.dumps(dump(first)))
        return None
    emit("input_required", result=dump(first))
    return first


async def retry(client, state, responses):
    return await client.session.call_tool(
        "ask_user",
        ASK,
        progress_callback=on_progress,
        input_responses=responses,
        request_state=state,
        allow_input_required=True,
    )


async def hold(client, _args):
    first = await first_round(client)
    if first is None:
        return
    stdin = anyio.wrap_file(sys.stdin)
    await stdin.readline()
    accepted = {"form": {"action": "accept", "content": PRODUCTION}}
    result = await retry(client, first.request_state, accepted)
    emit("result", result=dump(result))


async def tampered(client, _args):
    first = await first_round(client)
    if first is None:
        return
    state = first.request_state
    changed = state[:-1] + ("A" if state[-1] != "A" else "B")
    accepted = {"form": {"action": "accept", "content": PRODUCTION}}
    for name, bad in (("changed", changed), ("foreign", "rs1.bm90IG91cnM.AAAA")):
        try:
            result = await retry(client, bad, accepted)
            emit("unexpected_result", state=name, result=dump(result))
        except MCPError as error:
            emit("refused", state=name, code=error.error.code, message=error.error.message)


async def abandon(client, _args):
    async def first_progress(progress, total, message):
        await on_progress(progress, total, message)
        match = ASK_ID.search(message or "")
        emit("abandoning", id=match.group(1) if match else None)
        os._exit(0)

    await client.call_tool("ask_user", ASK, progress_callback=first_progress)


async def get_answer(client, args):
    result = await client.call_tool("get_answer", {"id": args[0], "waitSeconds": 60})
    emit("result", result=dump(result))


SCENARIOS = {
    "accept": (driven, types.ElicitResult(action="accept", content=PRODUCTION)),
    "decline": (driven, types.ElicitResult(action="decline")),
    "hold": (hold, types.ElicitResult(action="cancel")),
    "tampered": (tampered, types.ElicitResult(action="cancel")),
    "abandon": (abandon, None),
    "get_answer": (get_answer, None),
}


async def main(argv):
    if len(argv) < 4 or argv[1] not in ("stdio", "http") or argv[2] not in SCENARIOS:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    transport, (scenario, reply) = argv[1], SCENARIOS[argv[2]]
    if transport == "stdio":
        server, args = StdioServerParameters(command=argv[3], args=argv[4:]), []
    else:
        server, args = argv[3], argv[4:]
    callback = elicitation(reply) if reply is not None else None
    async with Client(server, mode=VERSION, elicitation_callback=callback) as client:
        emit("connected", protocol=client.protocol_version)
        await scenario(client, args)
    emit("done")


if __name__ == "__main__":
    anyio.run(main, sys.argv)

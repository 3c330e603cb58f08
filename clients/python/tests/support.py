"""Test support: running a real askbridge daemon, a stand-in for a person
answering on the web page, and the questions the tests ask.

The daemon binary is `$ASKBRIDGE_BIN` (else `askbridge` on the PATH). Each
daemon gets its own config and data directory, listens on a free loopback
port, and is stopped at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Dict, Iterator, List, Optional, Tuple

import httpx
import pytest

# The package's source, whatever the working directory (pytest's
# `pythonpath` setting does the same when it reads clients/python's
# pyproject.toml; this covers being run with another rootdir).
SRC = Path(__file__).resolve().parent.parent / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

import askbridge  # noqa: E402

WEBHOOK_SECRET = "test-webhook-secret"
STARTUP_TIMEOUT = 30.0
_LISTENING = re.compile(r"listening on (http://\S+)")


@dataclass
class Daemon:
    url: str
    process: "subprocess.Popen[bytes]"
    stderr_path: Path

    def log(self) -> str:
        """What the daemon wrote on standard error so far."""
        return self.stderr_path.read_text(errors="replace")


def daemon_binary() -> str:
    binary = os.environ.get("ASKBRIDGE_BIN") or shutil.which("askbridge")
    if not binary:
        pytest.fail("set ASKBRIDGE_BIN to the askbridge binary to test against")
    return binary


@contextlib.contextmanager
def run_daemon(
    directory: Path,
    extra_config: str = "",
    webhook_secret: str = WEBHOOK_SECRET,
) -> Iterator[Daemon]:
    """Start `askbridge serve` in `directory` and stop it afterwards.

    `extra_config` is appended to the TOML config (e.g. a `[webhooks]`
    section). The daemon gets a bare environment: PATH, HOME and the
    webhook secret, so no token or platform credential of the caller leaks
    in.
    """
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "askbridge.toml"
    config.write_text(
        'listen = "127.0.0.1:0"\n'
        f"data_dir = {json.dumps(str(directory / 'data'))}\n"
        + extra_config
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(directory),
        "ASKBRIDGE_WEBHOOK_SECRET": webhook_secret,
    }
    stderr_path = directory / "stderr.log"
    with open(stderr_path, "wb") as stderr:
        process = subprocess.Popen(
            [daemon_binary(), "serve", "--config", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
        )
    lines: "queue.Queue[Optional[str]]" = queue.Queue()
    assert process.stdout is not None
    threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True).start()
    try:
        url = _await_listening(lines, stderr_path)
        yield Daemon(url, process, stderr_path)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _pump(stream: IO[bytes], lines: "queue.Queue[Optional[str]]") -> None:
    """Reads the daemon's standard output line by line (so that it never
    blocks on a full pipe); `None` marks its end."""
    for line in stream:
        lines.put(line.decode(errors="replace"))
    lines.put(None)


def _await_listening(lines: "queue.Queue[Optional[str]]", stderr_path: Path) -> str:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        remaining = deadline - time.monotonic()
        try:
            line = lines.get(timeout=max(remaining, 0.001))
        except queue.Empty:
            pytest.fail(f"askbridge did not say `listening on` within {STARTUP_TIMEOUT} s:\n{stderr_path.read_text()}", pytrace=False)
        if line is None:
            pytest.fail(f"askbridge exited before listening:\n{stderr_path.read_text()}", pytrace=False)
        match = _LISTENING.search(line)
        if match:
            return match.group(1)


def three_questions() -> List[Any]:
    """A single-choice, a multi-select and a text question, given in the
    ways a caller may give them: models, a label-only option, a dict."""
    return [
        askbridge.Question(
            id="deploy",
            header="Deploy",
            question="Where should I deploy?",
            options=[askbridge.Option(label="Staging (Recommended)", value="stg"), "Production"],
        ),
        askbridge.Question(
            id="notify",
            question="Who should be told?",
            type="multi",
            options=["Team channel", "On-call", "Nobody"],
        ),
        {"id": "note", "question": "Anything to add?", "type": "text", "placeholder": "a line"},
    ]


THREE_ANSWERS = {"deploy": "staging", "notify": ["Team channel", "Nobody"], "note": "ship it"}
"""Structured answers to `three_questions()` (a label matches ignoring case
and the `(Recommended)` marker)."""


def check_three_answers(outcome: askbridge.Outcome) -> None:
    """The outcome of `three_questions()` answered with `THREE_ANSWERS` by
    Alice, checked field by field."""
    assert isinstance(outcome, askbridge.EndedAsk)
    assert outcome.id.startswith("ask_")
    assert outcome.status == "answered"
    assert outcome.reason is None
    assert outcome.answers == {
        "deploy": ["Staging (Recommended)"],
        "notify": ["Team channel", "Nobody"],
        "note": ["ship it"],
    }
    details = {d.id: d for d in outcome.details}
    assert details["deploy"].selected == ["Staging (Recommended)"]
    assert details["deploy"].values == ["stg"]
    assert details["notify"].values == ["Team channel", "Nobody"]
    assert details["note"].values == ["ship it"]
    assert all(d.via == "web" and d.other is None for d in outcome.details)
    assert outcome.answered_by is not None
    assert outcome.answered_by.channel == "web"
    assert outcome.answered_by.user_id == "alice"
    assert outcome.answered_by.name == "Alice"
    assert "Deploy: Staging (Recommended)" in outcome.text
    assert outcome.continuation
    assert [q.type for q in outcome.ask.questions] == ["single", "multi", "text"]
    assert outcome.to == "web"


ALICE = {"id": "alice", "name": "Alice"}


class WebAnswerer:
    """A person on the web page: listens to `GET /v1/events` and, when the
    ask with `title` is created, answers it with `reply` (a reply body).

    Use as a context manager: entering waits until the event stream is
    live, so an ask created afterwards is seen; leaving waits for the
    answer to have been sent and re-raises any error of the listener.
    """

    def __init__(self, base_url: str, title: str, reply: Dict[str, Any], timeout: float = 30.0) -> None:
        self.base_url = base_url
        self.title = title
        self.reply = reply
        self.timeout = timeout
        self.ready = threading.Event()
        self.response: Optional[Dict[str, Any]] = None
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "WebAnswerer":
        self._thread.start()
        if not self.ready.wait(self.timeout):
            raise AssertionError("the event stream did not become ready")
        if self._error is not None:
            raise self._error
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._thread.join(self.timeout)
        if self._thread.is_alive():
            raise AssertionError("the web answerer did not finish")
        if self._error is not None and exc_info[0] is None:
            raise self._error

    def _run(self) -> None:
        deadline = time.monotonic() + self.timeout
        try:
            with httpx.Client(timeout=httpx.Timeout(10.0, read=self.timeout)) as http:
                with http.stream("GET", f"{self.base_url}/v1/events") as response:
                    response.raise_for_status()
                    for event, data in sse_events(response.iter_lines()):
                        if event == "ready":
                            self.ready.set()
                        elif event == "created" and data["ask"].get("title") == self.title:
                            answered = http.post(f"{self.base_url}/v1/asks/{data['id']}/reply", json=self.reply)
                            answered.raise_for_status()
                            self.response = answered.json()
                            return
                        if time.monotonic() > deadline:
                            raise TimeoutError(f"no ask titled {self.title!r} was created")
        except BaseException as exc:  # reported by __exit__
            self._error = exc
            self.ready.set()


def sse_events(lines: Iterator[str]) -> Iterator[Tuple[str, Any]]:
    """(event, parsed data) of a Server-Sent Events stream."""
    event = "message"
    data: List[str] = []
    for line in lines:
        if line == "":
            if data:
                yield event, json.loads("\n".join(data))
            event, data = "message", []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[len("event:"):].strip()
        elif line.startswith("data:"):
            data.append(line[len("data:"):].lstrip())

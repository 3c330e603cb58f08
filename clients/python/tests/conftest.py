"""Fixtures: a real askbridge daemon (see support.py) and clients of it."""

from __future__ import annotations

from typing import Iterator

import pytest

from support import Daemon, run_daemon

import askbridge


@pytest.fixture(scope="session")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon for the session, with the default configuration (no
    `[webhooks]` section: the webhook tests start their own)."""
    with run_daemon(tmp_path_factory.mktemp("askbridge")) as running:
        yield running


@pytest.fixture
def client(daemon: Daemon) -> Iterator[askbridge.Client]:
    with askbridge.Client(daemon.url, timeout=10) as c:
        yield c


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

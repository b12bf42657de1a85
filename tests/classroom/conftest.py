"""Fixtures of the classroom tests: a real Redis per module, and each store to test against."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from redis_server import RedisServer, running_redis  # noqa: E402


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> Iterator[RedisServer]:
    """One redis-server for the session (tests use fresh codes, so they never meet)."""
    with running_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server


def run(coro):
    """Run one coroutine to its end on a fresh event loop."""
    return asyncio.run(coro)

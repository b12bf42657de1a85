"""Fixtures of the classroom tests: a real Redis per module, and each store to test against."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from class_support import ui_support  # noqa: E402
from redis_server import RedisServer, running_redis  # noqa: E402


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> Iterator[RedisServer]:
    """One redis-server for the session (tests use fresh codes, so they never meet)."""
    with running_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """Debian's Chromium (or ``$OVERLAP_LAB_CHROMIUM``), as the other browser tests use it."""
    return {
        **browser_type_launch_args,
        "executable_path": ui_support.chromium_path(),
        "args": ui_support.CHROMIUM_ARGS,
    }

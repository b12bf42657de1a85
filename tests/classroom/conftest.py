"""Fixtures of the classroom tests: a real Redis per module, and each store to test against."""

from __future__ import annotations

import asyncio
import concurrent.futures
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


def run(coro, timeout: float = 120.0):
    """Run one coroutine to its end on a fresh event loop, in a thread of its own.

    (The browser tests' Playwright keeps an event loop running in this thread.)
    """
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(coro, timeout)).result()


def _load(name: str, path: Path):
    """A helper module of the browser tests (tests/ui), loaded by path under its own name."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


UI = HERE.parent / "ui"
ui_support = _load("classroom_ui_support", UI / "conftest.py")
ui_balancer = _load("classroom_ui_balancer", UI / "balancer.py")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """Debian's Chromium (or ``$OVERLAP_LAB_CHROMIUM``), as the other browser tests use it."""
    return {
        **browser_type_launch_args,
        "executable_path": ui_support.chromium_path(),
        "args": ui_support.CHROMIUM_ARGS,
    }

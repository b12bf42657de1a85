"""Helpers of the classroom tests, imported by name (``from class_support import run``).

They live apart from ``conftest.py`` because another folder's ``conftest`` may hold that
module name when tests of several folders run together.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


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

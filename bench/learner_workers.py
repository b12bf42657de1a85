"""A class round's learners spread over worker processes, each its own event loop.

A thousand learners in one Python process make the load generator the slowest
part of the round: its own CPU (Tornado's HTTP client parsing every response)
then sets the measured latency, not the server. In a real class every learner's
browser is its own machine, so the benchmark spreads the learners over as many
processes as the machine has cores. Each worker holds its learners' event
streams and does, on the runner's word, what their pages do: wait for the
round's widget, vote, wait for the answer.

Times are ``time.perf_counter()``, which on Linux reads the system-wide
monotonic clock, so a worker's times compare with the runner's.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import time
from collections.abc import Callable

from tornado.httpclient import HTTPRequest

from bench.classroom import Learner
from bench.loadclient import configure_client

#: Processes the learners are spread over unless told: one per core.
WORKERS = os.cpu_count() or 1


async def widget_arrives(base: str, learner: Learner, assets: tuple) -> tuple[float, int]:
    """When the learner's frame had the round's widget, and the bytes it loaded."""
    await learner.stream.until(lambda v: v.get("phase") == "voting" and "src" in v)
    view = next(v for _, v in reversed(learner.stream.views) if "src" in v)
    size = 0
    for path in (view["src"], *(f"/class/assets/{name}" for name in assets)):
        response = await learner.client.fetch(
            HTTPRequest(f"{base}{path}", headers=learner.headers()), raise_error=False
        )
        if response.code != 200:
            raise RuntimeError(f"{path} answered {response.code}")
        size += len(response.body)
    return time.perf_counter(), size


def _answered(view: dict) -> bool:
    return "answer" in view and "states" in view


async def _serve(conn, base: str, code: str, routes: list[str]) -> None:
    """Join every learner, then answer the runner's commands until it says stop."""
    configure_client(4 * len(routes) + 50)
    learners = [Learner(base, code, route) for route in routes]
    await asyncio.gather(*(lr.join() for lr in learners))
    conn.send("joined")
    loop = asyncio.get_running_loop()
    while True:
        command, arg = await loop.run_in_executor(None, conn.recv)
        if command == "widget":
            cpu0 = time.process_time()
            loaded = await asyncio.gather(*(widget_arrives(base, lr, arg) for lr in learners))
            conn.send((loaded, time.process_time() - cpu0))
        elif command == "vote":
            votes = await asyncio.gather(*(lr.vote(v) for lr, v in zip(learners, arg, strict=True)))
            conn.send(votes)
        elif command == "answer":
            conn.send(await asyncio.gather(*(lr.stream.until(_answered) for lr in learners)))
        else:
            return


def _worker(conn, base: str, code: str, routes: list[str]) -> None:
    try:
        asyncio.run(_serve(conn, base, code, routes))
    except Exception as exc:  # the runner reports it and stops the round
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))


def interleave(parts: list[list]) -> list:
    """Per-learner results in learner order, from worker ``k``'s learners ``k, k + w, ...``."""
    out = [None] * sum(len(part) for part in parts)
    for k, part in enumerate(parts):
        out[k :: len(parts)] = part
    return out


class LearnerWorkers:
    """``n`` learners of one class in ``workers`` processes, learner ``i`` in ``i % workers``."""

    def __init__(
        self, base: str, code: str, n: int, routes: Callable[[int], str], workers: int
    ) -> None:
        self.workers = max(1, min(workers, n))
        spawn = multiprocessing.get_context("spawn")
        self._conns, self._procs = [], []
        for k in range(self.workers):
            ours, theirs = spawn.Pipe()
            names = [routes(i) for i in range(k, n, self.workers)]
            proc = spawn.Process(target=_worker, args=(theirs, base, code, names), daemon=True)
            proc.start()
            self._conns.append(ours)
            self._procs.append(proc)

    async def _gather(self) -> list:
        loop = asyncio.get_running_loop()
        replies = await asyncio.gather(
            *(loop.run_in_executor(None, conn.recv) for conn in self._conns)
        )
        for reply in replies:
            if isinstance(reply, tuple) and reply and reply[0] == "failed":
                raise RuntimeError(f"a learner worker failed: {reply[1]}")
        return replies

    async def join(self) -> None:
        """Every learner's page loaded and its stream open."""
        await self._gather()

    def expect_widget(self, assets: tuple) -> None:
        """Tell every worker to wait for the round's widget (send before Open voting)."""
        for conn in self._conns:
            conn.send(("widget", assets))

    async def widgets(self) -> tuple[list[tuple[float, int]], float]:
        """Each learner's (time the widget was there, bytes), and the workers' CPU (s)."""
        replies = await self._gather()
        return interleave([r[0] for r in replies]), sum(r[1] for r in replies)

    async def vote(self, values: list) -> list[tuple[float, float, dict]]:
        """Every learner votes its value at once: (sent, answered, reply) each."""
        for k, conn in enumerate(self._conns):
            conn.send(("vote", values[k :: self.workers]))
        return interleave(await self._gather())

    def expect_answer(self) -> None:
        """Tell every worker to wait for the answer (send before Reveal)."""
        for conn in self._conns:
            conn.send(("answer", None))

    async def answers(self) -> list[float]:
        """When each learner's page had the answer and the revealed states."""
        return interleave(await self._gather())

    def stop(self) -> None:
        """End every worker (its streams close with it)."""
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.send(("stop", None))
        for proc in self._procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()

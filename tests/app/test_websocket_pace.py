"""A websocket's messages are paced to a share of the process; a page never meets the pace."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time

import pytest

from app.server.websocket_pace import (
    BURST_FRAMES,
    FRAMES_PER_SECOND,
    MessagePace,
    install_websocket_pace,
)
from bench.loadclient import _message, _read_message, _send, configure_client, load_page
from bench.servers import app_command, running_servers


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_bucket_gives_a_burst_then_a_rate_worked_out_by_hand() -> None:
    clock = FakeClock()
    pace = MessagePace(rate=30.0, burst=300, clock=clock)
    assert [pace.take() for _ in range(300)] == [0.0] * 300  # the burst: 100 messages
    assert pace.take() == pytest.approx(1 / 30)  # one frame past it waits one frame's time
    assert pace.take() == pytest.approx(2 / 30)
    clock.now += 2 / 30
    assert pace.take() == pytest.approx(1 / 30)
    clock.now += 1.0  # a second: 30 frames earned back
    assert [pace.take() for _ in range(29)] == pytest.approx([0.0] * 29, abs=1e-9)
    assert pace.take() > 0
    clock.now += 100.0  # idle: the bucket fills to its burst, no further
    pace.take()
    assert pace.tokens == pytest.approx(299)


def test_the_paced_handler_serves_every_apps_websocket() -> None:
    from app.server.panel_internals import per_app_route_patterns

    install_websocket_pace()
    install_websocket_pace()  # once is enough: not paced twice
    handler = dict(per_app_route_patterns())["/ws"]
    assert handler.__name__ == "PacedWSHandler"
    assert not handler.__mro__[1].__name__.startswith("Paced")


def run(coro, timeout: float = 300.0):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(coro, timeout)).result()


def _edit(model_id: str, k: int) -> list[str]:
    event = {"kind": "ModelChanged", "model": {"id": model_id}, "attr": "hash", "new": f"#e{k}"}
    return _message("PATCH-DOC", {"events": [event]})


FLOOD = 1500
WATCH_SECONDS = 4.0


def test_a_flood_of_property_edits_is_paced_and_another_page_is_answered_meanwhile() -> None:
    """1,500 hand-made edits from one page: answered no faster than the pace allows.

    Every PATCH-DOC is answered with an OK; while watching, the count answered by
    any moment ``t`` is at most the burst plus the frames earned since, three to a
    message (an upper bound a slower machine only stays further under). Before,
    1,047 of them were answered within 4 s, as fast as the process could.
    """
    configure_client()

    async def body(base: str) -> tuple[list[tuple[float, int]], int]:
        flooder = await load_page(base, "/trace")
        other = await load_page(base, "/trace")
        for page in (flooder, other):
            assert page.ok, page.error
            page.drain.cancel()
        (location,) = flooder.models["Location"]
        (other_location,) = other.models["Location"]
        start = time.perf_counter()
        for k in range(FLOOD):
            await _send(flooder.ws, _edit(location["id"], k))
        await _send(other.ws, _edit(other_location["id"], 0))
        seen: list[tuple[float, int]] = []
        answered = 0

        async def watch() -> None:
            nonlocal answered
            while True:
                header, _ = await _read_message(flooder.ws)
                if header.get("msgtype") == "OK":
                    answered += 1
                    seen.append((time.perf_counter() - start, answered))

        watcher = asyncio.ensure_future(watch())
        header = None
        while header is None or header.get("msgtype") != "OK":
            header, _ = await _read_message(other.ws)
        flood_when_other_answered = answered
        remaining = WATCH_SECONDS - (time.perf_counter() - start)
        if remaining > 0:
            await asyncio.sleep(remaining)
        watcher.cancel()
        seen.append((time.perf_counter() - start, answered))
        flooder.ws.close()
        other.ws.close()
        return seen, flood_when_other_answered

    with running_servers() as servers:
        server = servers.start("app", app_command, "/")
        seen, before_other = run(body(server.url))
        assert "Traceback" not in server.log_text(), server.log_text()[-4000:]
    bound = [(BURST_FRAMES + FRAMES_PER_SECOND * t) / 3 + 5 for t, _ in seen]
    over = [(round(t, 2), n) for (t, n), most in zip(seen, bound, strict=True) if n > most]
    assert not over, f"answered faster than the pace: {over[:5]} (of {seen[-1]})"
    assert seen[-1][1] > 0  # the flood is answered, at its pace
    assert before_other < FLOOD  # the other page did not wait for the whole flood

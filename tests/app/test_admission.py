"""The page gate: session builds take turns, and work already under way goes first."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest

from app.server.admission import PageGate, install_page_gate


def test_builds_take_turns_in_arrival_order():
    gate = PageGate(yields=3)
    log: list[tuple[str, int]] = []
    most_at_once = 0

    async def page(i: int) -> None:
        nonlocal most_at_once
        async with gate.turn():
            most_at_once = max(most_at_once, gate.building)
            log.append(("start", i))
            await asyncio.sleep(0)  # a build that yields must still not overlap the next
            log.append(("end", i))

    async def main() -> None:
        await asyncio.gather(*(page(i) for i in range(5)))

    asyncio.run(main())
    assert log == [(what, i) for i in range(5) for what in ("start", "end")]
    assert most_at_once == 1
    assert (gate.waiting, gate.building) == (0, 0)


def test_pages_counts_those_waiting_and_the_one_in_its_turn():
    gate = PageGate(yields=2)
    seen: list[int] = []

    async def page() -> None:
        async with gate.turn():
            seen.append(gate.pages)
            await asyncio.sleep(0)

    async def main() -> None:
        assert gate.pages == 0
        await asyncio.gather(*(page() for _ in range(3)))

    asyncio.run(main())
    # The first build sees the other two waiting, and so on; then the gate is empty.
    assert seen == [3, 2, 1]
    assert gate.pages == 0


@pytest.mark.parametrize("yields, steps_done_first", [(0, 0), (4, 4), (10, 6)])
def test_work_already_ready_runs_before_the_build(yields, steps_done_first):
    """A websocket's next steps (each scheduling the next) run in the turns before a build."""
    gate = PageGate(yields=yields)
    steps: list[int] = []
    seen_by_build: list[int] = []

    def step(k: int) -> None:
        steps.append(k)
        if k < 6:
            asyncio.get_running_loop().call_soon(step, k + 1)

    async def main() -> None:
        asyncio.get_running_loop().call_soon(step, 1)
        async with gate.turn():
            seen_by_build.append(len(steps))

    asyncio.run(main())
    # The turn takes the lock without waiting; each yield then lets one step run.
    assert seen_by_build == [steps_done_first]


def test_a_failed_build_frees_the_turn():
    gate = PageGate(yields=1)
    built: list[int] = []

    async def failing() -> None:
        async with gate.turn():
            raise RuntimeError("the route raised")

    async def page() -> None:
        async with gate.turn():
            built.append(1)

    async def main() -> None:
        results = await asyncio.gather(failing(), page(), return_exceptions=True)
        assert isinstance(results[0], RuntimeError)

    asyncio.run(main())
    assert built == [1]
    assert (gate.waiting, gate.building) == (0, 0)


def test_one_gate_serves_one_event_loop_after_another():
    """A process that serves again on a new loop (as tests do) keeps a working gate."""
    gate = PageGate(yields=1)
    built: list[int] = []

    async def page(i: int) -> None:
        async with gate.turn():
            await asyncio.sleep(0)  # the next page waits: the lock is contended
            built.append(i)

    async def burst(first: int) -> None:
        await asyncio.gather(page(first), page(first + 1))

    asyncio.run(burst(0))
    asyncio.run(burst(2))
    assert built == [0, 1, 2, 3]


def test_a_negative_number_of_turns_is_refused():
    with pytest.raises(ValueError, match="cannot be negative: -1"):
        PageGate(yields=-1)


def test_installing_gates_page_and_embed_handlers_once():
    from bokeh.server.urls import per_app_patterns
    from panel.io.server import AutoloadJsHandler, DocHandler, WSHandler

    install_page_gate()
    install_page_gate()
    handlers = dict(per_app_patterns)
    # Websockets are not gated (they may be paced: app.server.websocket_pace).
    assert WSHandler in handlers["/ws"].__mro__[:2]
    assert not handlers["/ws"].__name__.startswith("Gated")
    assert handlers["/?"].__name__ == "GatedDocHandler"
    assert handlers["/?"].__mro__[1] is DocHandler
    assert handlers["/autoload.js"].__name__ == "GatedAutoloadJsHandler"
    assert handlers["/autoload.js"].__mro__[1] is AutoloadJsHandler


# --- served: a burst of learners ------------------------------------------------

SLOW_SERVER = textwrap.dedent(
    """
    import sys, time
    import panel as pn
    from app.server.serving import configure_process

    def slow():
        time.sleep(0.15)  # a session that takes a while to build
        return pn.pane.Markdown("built")

    pn.extension(inline=False)
    configure_process()
    pn.serve({"slow": slow}, port=int(sys.argv[1]), address="127.0.0.1", show=False,
             threaded=False, allow_websocket_origin=["127.0.0.1:" + sys.argv[1]])
    """
)


@pytest.fixture
def slow_server():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_SERVER, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(base + "/slow", timeout=5):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail("the test server did not start")
            time.sleep(0.2)
    yield base
    proc.kill()
    proc.wait()


def test_a_class_gets_working_pages_one_after_another(slow_server):
    """The first learner's page works before the last learner's page is even sent.

    Without the gate every page's websocket waited until all sessions of the
    burst were built, so the first page became usable after the last HTML.
    """
    from bench.loadclient import close, configure_client, load_page

    configure_client()

    async def burst():
        pages = await asyncio.gather(*(load_page(slow_server, "/slow") for _ in range(8)))
        for page in pages:
            close(page)
        return pages

    pages = asyncio.run(burst())
    assert [p.error for p in pages] == [None] * 8
    first = min(pages, key=lambda p: p.html)
    last = max(pages, key=lambda p: p.html)
    assert first.replayed < last.html


def test_a_waiting_page_sends_its_notice_before_its_turn(slow_server):
    """The last of three pages gets its first bytes before the second page is complete."""
    from tornado.httpclient import AsyncHTTPClient, HTTPRequest

    from app.server.loading_page import early_notice_html

    async def burst():
        first_chunk: dict[int, float] = {}
        chunks: dict[int, list[bytes]] = {i: [] for i in range(3)}
        done: dict[int, float] = {}

        async def get(i: int) -> None:
            def on_chunk(data: bytes) -> None:
                first_chunk.setdefault(i, time.monotonic())
                chunks[i].append(data)

            request = HTTPRequest(slow_server + "/slow", streaming_callback=on_chunk)
            await AsyncHTTPClient().fetch(request)
            done[i] = time.monotonic()

        await asyncio.gather(*(get(i) for i in range(3)))
        return first_chunk, chunks, done

    first_chunk, chunks, done = asyncio.run(burst())
    last = max(done, key=done.get)
    second = sorted(done, key=done.get)[1]
    assert first_chunk[last] < done[second]
    body = b"".join(chunks[last]).decode()
    assert body.startswith(early_notice_html())
    assert "<title>" in body and body.rstrip().endswith("</html>")  # then the whole page
    first = min(done, key=done.get)
    assert b"".join(chunks[first]).decode().count("<!DOCTYPE html>") == 1  # it did not wait

"""The process's upload queue: one upload per session, light ones first, a byte budget, memory back.

The readers here are stand-ins that wait for the test, so the order in which
uploads are answered is decided by the queue alone, never by timing.
"""

from __future__ import annotations

import gc
import gzip
import struct
import threading
import tracemalloc

import pytest

from traces.upload import MAX_UNPACKED_BYTES, MAX_UPLOAD_BYTES
from widgets.trace_viewer.upload_queue import (
    BUDGET_BYTES,
    BUSY,
    LIGHT_BYTES,
    ONE_AT_A_TIME,
    UploadQueue,
    UploadRefused,
    is_light,
    read_files,
    upload_cost,
)

MIB = 1024 * 1024
SMALL = [("trace.json", b"{" + b" " * 21_000 + b"}")]  # a 21 kB trace file


def heavy(name: str = "big.json", size: int = 8 * MIB) -> list[tuple[str, bytes]]:
    return [(name, b" " * size)]


class Readers:
    """Stand-in reading: a heavy file waits until the test lets it go; answers are recorded."""

    def __init__(self) -> None:
        self.answered: list[str] = []
        self.started: list[str] = []
        self.go: dict[str, threading.Event] = {}
        self.done_event = threading.Condition()

    def read(self, files) -> str:
        name = files[0][0]
        self.started.append(name)
        if name in self.go:
            assert self.go[name].wait(timeout=60)
        return f"read {name}"

    def done(self, name: str):
        def answer(outcome) -> None:
            with self.done_event:
                self.answered.append(name)
                self.done_event.notify_all()

        return answer

    def wait_answered(self, *names: str) -> None:
        with self.done_event:
            assert self.done_event.wait_for(
                lambda: all(n in self.answered for n in names), timeout=60
            ), f"not answered: {names} (answered {self.answered})"

    def wait_started(self, name: str) -> None:
        for _ in range(6000):
            if name in self.started:
                return
            threading.Event().wait(0.01)
        raise AssertionError(f"{name} was never read")


def queue(readers: Readers, budget: int = BUDGET_BYTES) -> UploadQueue:
    return UploadQueue(budget_bytes=budget, read=readers.read, release=lambda: None)


def test_a_session_has_one_upload_in_flight() -> None:
    r = Readers()
    q = queue(r)
    r.go["first.json"] = threading.Event()
    q.submit("page-a", heavy("first.json"), r.done("first"))
    with pytest.raises(UploadRefused, match="still being read"):
        q.submit("page-a", heavy("second.json"), r.done("second"))
    assert str(ONE_AT_A_TIME).startswith("your previous upload")
    q.submit("page-b", SMALL, r.done("other page"))  # another session is not held up
    r.wait_answered("other page")
    r.go["first.json"].set()
    r.wait_answered("first")
    q.submit("page-a", heavy("third.json"), r.done("third"))  # answered: the next one goes in
    r.wait_answered("third")
    assert q.held_bytes == 0


def test_a_small_trace_goes_before_heavy_uploads_of_other_sessions() -> None:
    r = Readers()
    q = queue(r, budget=10 * BUDGET_BYTES)
    for name in ("h1.json", "h2.json", "h3.json", "h4.json"):
        r.go[name] = threading.Event()
    q.submit("page-1", heavy("h1.json"), r.done("h1"))
    r.wait_started("h1.json")  # the heavy reader is busy with h1
    ahead = [q.submit(f"page-{k}", heavy(f"h{k}.json"), r.done(f"h{k}")) for k in (2, 3, 4)]
    assert ahead == [1, 2, 3]  # after h1, in the order they came, one per session
    assert q.waiting() == ["page-2", "page-3", "page-4"]
    assert q.submit("learner", SMALL, r.done("small")) == 0  # nothing is read before it
    r.wait_answered("small")
    assert r.answered == ["small"]  # while every heavy upload still waits or is read
    for name in ("h1.json", "h2.json", "h3.json", "h4.json"):
        r.go[name].set()
    r.wait_answered("h1", "h2", "h3", "h4")
    assert r.answered == ["small", "h1", "h2", "h3", "h4"]


def test_the_budget_refuses_uploads_that_would_pass_it_and_frees_as_they_are_read() -> None:
    r = Readers()
    q = queue(r, budget=3 * 8 * MIB + 3 * 8 * MIB)  # room for three 8 MiB plain files
    for k in range(3):
        r.go[f"h{k}.json"] = threading.Event()
        q.submit(f"page-{k}", heavy(f"h{k}.json"), r.done(f"h{k}"))
    assert q.held_bytes == 3 * 16 * MIB  # each: 8 MiB as sent, 8 MiB unpacked
    with pytest.raises(UploadRefused) as refused:
        q.submit("page-3", heavy("h3.json"), r.done("h3"))
    assert str(refused.value) == BUSY and "try again" in BUSY
    for k in range(3):
        r.go[f"h{k}.json"].set()
    r.wait_answered("h0", "h1", "h2")
    assert q.held_bytes == 0
    q.submit("page-3", heavy("h3.json"), r.done("h3"))
    r.wait_answered("h3")


def test_the_default_budget_holds_two_of_the_largest_uploads() -> None:
    largest = [("p.json.gz", gzip.compress(b"x", mtime=0)[:-4] + struct.pack("<I", 0))]
    # A trailer that says nothing (0) counts as the limit.
    assert upload_cost(largest) == len(largest[0][1]) + MAX_UNPACKED_BYTES
    assert BUDGET_BYTES == 2 * (MAX_UPLOAD_BYTES + MAX_UNPACKED_BYTES) == 152 * MIB


def test_the_cost_of_an_upload_is_what_it_holds_as_sent_and_unpacked() -> None:
    packed = gzip.compress(b" " * 5000, mtime=0)
    assert upload_cost([("a.json.gz", packed)]) == len(packed) + 5000  # the trailer's size
    assert upload_cost([("a.json", b"x" * 300)]) == 600
    assert upload_cost([("a.json", b"x" * 300), ("b.json.gz", packed)]) == 300 + len(packed) + 5300
    # A trailer claiming more than the limit counts as the limit.
    liar = packed[:-4] + struct.pack("<I", MAX_UNPACKED_BYTES + 7)
    assert upload_cost([("a.json.gz", liar)]) == len(liar) + MAX_UNPACKED_BYTES
    assert is_light(SMALL) and not is_light([("a.json.gz", packed)])
    assert is_light([("a", b"x" * LIGHT_BYTES)]) and not is_light([("a", b"x" * (LIGHT_BYTES + 1))])


def test_a_refused_read_keeps_none_of_its_bytes_even_without_a_collection() -> None:
    """The outcome is words: held until the page shows it, it holds none of the unpacked bytes.

    (An exception as the outcome keeps them through its traceback's frames: 67 MiB here.)
    """
    bomb = gzip.compress(b" " * (MAX_UNPACKED_BYTES + 1), compresslevel=9, mtime=0)
    read_files([("warm.json.gz", bomb)])  # first use: imports, caches
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        outcome = read_files([("bomb.json.gz", bomb)])
        assert isinstance(outcome, str) and outcome.startswith("bomb.json.gz: unpacks to more than")
        kept = tracemalloc.get_traced_memory()[0] - before  # the outcome still held
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
        gc.enable()
    assert peak > MAX_UNPACKED_BYTES  # it did unpack up to the limit...
    assert kept < MIB  # ...and holds none of it once answered

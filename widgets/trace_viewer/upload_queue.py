"""The server's uploads waiting and being read: one per session, in turn, within a byte budget.

Reading an upload (``traces.upload.load_upload_files``) takes seconds of one core
and some times its unpacked size in memory, so a process reads them off its event
loop, and bounds what uploads may hold:

- **one in flight per session**: a page's next upload is refused while its last
  one is waiting or being read;
- **a budget per process**: the bytes every upload waiting or being read may
  hold (each one's files as sent plus what they unpack to, see :func:`upload_cost`)
  stay within ``budget_bytes``; past it, an upload is refused with "busy, try
  again" at its control instead of growing the process;
- **in turn between sessions**: one reader takes the heavy uploads in the order
  they came (one per session, so no page goes twice before another goes once),
  and a second reader takes only light ones (plain files of at most
  ``LIGHT_BYTES``), so a learner's small trace never waits behind another
  page's large profiles;
- **memory back after each read**: a job drops its files as soon as it is read;
  the outcome is the upload or words, never an exception, whose traceback would
  keep the reader's frames, 64 MiB of unpacked bytes among them, alive for as long
  as the outcome is (until the page's loop has shown it, and then until a full
  collection reaches the garbage cycles around Bokeh's callback, which the
  server's raised thresholds, ``app.server.serving.GC_THRESHOLDS``, put off for
  long); after a heavy read the reader collects every generation and hands freed
  heap pages back to the system (glibc's ``malloc_trim``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import itertools
import logging
import struct
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from traces import TraceError
from traces.profiler_read import GZIP_MAGIC
from traces.upload import MAX_UNPACKED_BYTES, MAX_UPLOAD_BYTES, Upload, load_upload_files

LOG = logging.getLogger(__name__)

#: An upload of plain (not gzipped) files of at most this many bytes together is light:
#: read by the second reader at once, never behind a heavy one (a trace file is some 20 kB).
LIGHT_BYTES = 1024 * 1024
#: What the uploads of one process may hold at once (waiting or being read): two of
#: the largest, each its 12 MiB as sent and the 64 MiB it may unpack to.
BUDGET_BYTES = 2 * (MAX_UPLOAD_BYTES + MAX_UNPACKED_BYTES)
#: A read that held at least this many bytes is followed by a full collection.
COLLECT_AFTER_BYTES = 8 * 1024 * 1024

#: The words at the control when the budget is full.
BUSY = "the server is busy reading other uploads; try again in a minute"
#: The words at the control when the page's previous upload is not answered yet.
ONE_AT_A_TIME = "your previous upload is still being read; send the next one once it is answered"

#: What reading gives: the upload, or the words saying why it was refused.
Outcome = Upload | str


class UploadRefused(Exception):
    """An upload the queue does not take now (busy, or the session's last one is in flight)."""


def _gzip_size(data: bytes) -> int:
    """What a gzip file says it unpacks to (its last 4 bytes), or the limit when it cannot say.

    The trailer holds the size modulo 2**32 and a hostile file may lie: the
    estimate only orders and admits uploads; reading still stops at the limit.
    """
    if len(data) < 18:
        return MAX_UNPACKED_BYTES
    (size,) = struct.unpack("<I", data[-4:])
    return min(size, MAX_UNPACKED_BYTES) if size else MAX_UNPACKED_BYTES


def upload_cost(files: Sequence[tuple[str, bytes]]) -> int:
    """The bytes an upload may hold while read: its files as sent and what they unpack to."""
    sent = sum(len(data) for _, data in files)
    unpacked = sum(
        _gzip_size(data) if data.startswith(GZIP_MAGIC) else len(data) for _, data in files
    )
    return sent + min(unpacked, MAX_UNPACKED_BYTES)


def is_light(files: Sequence[tuple[str, bytes]]) -> bool:
    """Plain files of at most ``LIGHT_BYTES`` together: read at once by the light reader."""
    return sum(len(data) for _, data in files) <= LIGHT_BYTES and not any(
        data.startswith(GZIP_MAGIC) for _, data in files
    )


def read_files(files: Sequence[tuple[str, bytes]]) -> Outcome:
    """The upload the files make, or why not, as words (never an exception to keep)."""
    try:
        return load_upload_files(files)
    except (TraceError, ValueError) as exc:
        return str(exc)
    except Exception as exc:  # a bug must not kill the page: say so in one log line
        LOG.error("reading an upload failed: %s: %s", type(exc).__name__, exc)
        return f"{files[0][0] if len(files) == 1 else f'{len(files)} files'} could not be read"


def _load_malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc: nothing to hand back explicitly
        return None


_MALLOC_TRIM = _load_malloc_trim()


def release_memory() -> None:
    """Collect every generation now, then hand free heap pages back to the system (glibc)."""
    gc.collect()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


@dataclass(eq=False)
class Job:
    """One upload waiting or being read."""

    session: str
    files: list[tuple[str, bytes]] | None
    cost: int
    light: bool
    done: Callable[[Outcome], None]
    order: int = field(default=0)


class UploadQueue:
    """A process's uploads: ``submit`` one per session; two reader threads answer them."""

    def __init__(
        self,
        budget_bytes: int = BUDGET_BYTES,
        read: Callable[[Sequence[tuple[str, bytes]]], Outcome] = read_files,
        release: Callable[[], None] = release_memory,
    ) -> None:
        self.budget_bytes = budget_bytes
        self._read = read
        self._release = release
        self._lock = threading.Condition()
        self._waiting: list[Job] = []
        self._in_flight: dict[str, Job] = {}
        self._held = 0
        self._order = itertools.count()
        self._readers: list[threading.Thread] = []
        #: What each reader (by whether it takes light uploads only) is reading now.
        self._reading: dict[bool, Job | None] = {False: None, True: None}

    @property
    def held_bytes(self) -> int:
        """What the uploads waiting and being read may hold now (their costs together)."""
        with self._lock:
            return self._held

    def waiting(self) -> list[str]:
        """The sessions whose uploads wait, in the order they will be read."""
        with self._lock:
            return [job.session for job in sorted(self._waiting, key=self._rank)]

    def submit(
        self, session: str, files: list[tuple[str, bytes]], done: Callable[[Outcome], None]
    ) -> int:
        """Queue ``files`` of ``session``; ``done`` gets the outcome on a reader thread.

        Returns how many uploads are read before this one (being read or waiting). Raises
        ``UploadRefused`` (with the words for the control) when the session's last
        upload is still in flight or the budget has no room for this one.
        """
        cost = upload_cost(files)
        light = is_light(files)
        with self._lock:
            if session in self._in_flight:
                raise UploadRefused(ONE_AT_A_TIME)
            if self._held + cost > self.budget_bytes:
                raise UploadRefused(BUSY)
            job = Job(session, files, cost, light, done, next(self._order))
            ahead = self._ahead(job)
            self._in_flight[session] = job
            self._held += cost
            self._waiting.append(job)
            self._start_readers()
            self._lock.notify_all()
        return ahead

    def _ahead(self, job: Job) -> int:
        """Uploads read before ``job``: those waiting before it, and one being read it waits for.

        Either reader takes a light upload, so it waits for a read only when both are busy.
        """
        waiting = sum(1 for other in self._waiting if self._rank(other) < self._rank(job))
        light_busy = all(self._reading.values())
        return waiting + (light_busy if job.light else self._reading[False] is not None)

    @staticmethod
    def _rank(job: Job) -> tuple[int, int]:
        return (0 if job.light else 1, job.order)

    def _start_readers(self) -> None:
        if self._readers:
            return
        for name, light_only in (("trace-upload", False), ("trace-upload-light", True)):
            reader = threading.Thread(
                target=self._serve, args=(light_only,), name=name, daemon=True
            )
            self._readers.append(reader)
            reader.start()

    def _next(self, light_only: bool) -> Job:
        with self._lock:
            while True:
                ready = [j for j in self._waiting if j.light or not light_only]
                if ready:
                    job = min(ready, key=self._rank)
                    self._waiting.remove(job)
                    self._reading[light_only] = job
                    return job
                self._lock.wait()

    def _serve(self, light_only: bool) -> None:
        while True:
            job = self._next(light_only)
            self.run(job)

    def run(self, job: Job) -> None:
        """Read one job, drop its files, give its outcome and release its place and budget."""
        files, job.files = job.files, None
        try:
            outcome = self._read(files)
        except Exception as exc:  # the reader must outlive any one upload
            LOG.error("reading an upload failed: %s: %s", type(exc).__name__, exc)
            outcome = "it could not be read"
        del files
        if job.cost >= COLLECT_AFTER_BYTES:
            self._release()  # before the answer: once the page hears it, memory is back
        with self._lock:
            self._in_flight.pop(job.session, None)
            self._held -= job.cost
            for reader, reading in self._reading.items():
                if reading is job:
                    self._reading[reader] = None
        try:
            job.done(outcome)
        except Exception as exc:
            LOG.error("answering an upload failed: %s: %s", type(exc).__name__, exc)


#: The process's one queue.
UPLOADS = UploadQueue()
